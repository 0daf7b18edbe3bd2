"""Real Chromium (Debian's /usr/bin/chromium) driven by Playwright against a live server.

Playwright never downloads a browser here. Without chromium the browser tests skip with the
reason, except where BROWSER_TESTS_REQUIRED=1 (set by .ci/run): there a missing browser fails.
Each test's last page is saved as a screenshot under test-artifacts/.
"""

import os
from pathlib import Path

import pytest
from django.contrib.auth.models import Group

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PASSWORD = "browser-test-password"

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls (fixtures,
# assertions) are still plain synchronous code, which Django would otherwise refuse.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def chromium():
    if not os.path.exists(CHROMIUM):
        if os.environ.get("BROWSER_TESTS_REQUIRED") == "1":
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium package")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium); CI installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium, live_server, request):
    context = chromium.new_context(
        base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()


@pytest.fixture
def person(django_user_model):
    """`person("operator", "olga")`: a user in that group whose password is PASSWORD."""

    def make(role: str, username: str):
        user = django_user_model.objects.create_user(username, password=PASSWORD)
        user.groups.add(Group.objects.get(name=role))
        return user

    return make


def sign_in(page, username: str, next_path: str = "/") -> None:
    page.goto(f"/login/?next={next_path}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()

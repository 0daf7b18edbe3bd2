"""The console and the API docs under the Content-Security-Policy in Chromium.

Every page sends `script-src 'self'`; Chromium reports each thing the policy blocks as a
`securitypolicyviolation` event and a console error. None may occur while the console's pages
load, the policy editor swaps its refusal in through htmx, and the API docs render.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import sign_in
from tests.browser.policy_editing import add_condition

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Recorded before any page script runs (an init script is the browser's, not the page's).
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


@pytest.fixture
def watched(page):
    page.add_init_script(RECORD_VIOLATIONS)
    messages = []
    page.on("console", lambda message: messages.append(message.text))

    def violations() -> list[str]:
        found = page.evaluate("window.__cspViolations || []")
        return found + [text for text in messages if "Content Security Policy" in text]

    page.violations = violations
    return page


def visit(page, path: str) -> list[str]:
    page.goto(path)
    page.wait_for_load_state("networkidle")
    return page.violations()


def test_the_console_pages_run_without_a_policy_violation(watched, person, coupon):
    person("operator", "olga")
    sign_in(watched, "olga")

    for path in ("/", f"/search/?q={coupon.user_id}", f"/coupons/{coupon.pk}/", "/cases/",
                 "/approvals/", "/compensations/", "/policies/"):
        assert visit(watched, path) == [], path
    watched.keyboard.press("/")  # console.js runs: "/" focuses the search box
    expect(watched.locator("#search-box")).to_be_focused()


def test_the_policy_editor_swaps_its_refusal_in_without_inline_script(watched, person):
    person("policy_admin", "paula")
    sign_in(watched, "paula", next_path="/policies/")
    watched.get_by_role("link", name="default", exact=True).click()
    watched.get_by_role("button", name="New draft from v1").click()

    add_condition(watched, 4, "refunded_share_min")  # shown in place by console.js
    watched.locator("#id_form-4-refunded_share_min").fill("2")
    watched.get_by_role("button", name="Save draft").click()

    expect(watched.locator("#id_form-4-refunded_share_min-errors")).to_have_text(
        "must be between 0 and 1")
    assert watched.violations() == []


@pytest.mark.parametrize("path, shown", [
    ("/api/v1/docs/", ".swagger-ui .info"),
    ("/api/v1/redoc/", ".api-content"),
])
def test_the_api_docs_render_under_the_policy(watched, person, path, shown):
    person("support", "sam")
    sign_in(watched, "sam")

    watched.goto(path)

    expect(watched.locator(shown).first).to_be_visible(timeout=20000)
    # ReDoc's "powered by" logo comes from its CDN: blocked on purpose, the docs load nothing
    # from elsewhere. Nothing else may be.
    assert [v for v in watched.violations() if "cdn.redoc.ly" not in v] == []

"""A Content-Security-Policy on every HTML page, and pages that obey it.

Before: no page sent one, so an injected script would have run. Now scripts come only from
this origin and never inline; the browser test tests/browser/test_csp.py checks that Chromium
reports no violation on the console's pages.
"""

import re
from pathlib import Path

import pytest
from django.test import Client

from tests.api.roles import person

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
INLINE_HANDLER = re.compile(r"\s(on[a-z]+|hx-on[:\w-]*)\s*=", re.I)


def policy_of(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {name: values for name, *values in
            (part.split() for part in header.split(";") if part.strip())}


@pytest.fixture
def operator():
    browser = Client()
    browser.force_login(person("olga", group="operator"))
    return browser


@pytest.mark.parametrize("path", ["/", "/search/?q=x", "/login/", "/admin/login/"])
def test_console_and_admin_pages_carry_a_strict_script_policy(operator, path):
    response = operator.get(path)

    policy = policy_of(response)
    assert policy["script-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    assert not INLINE_SCRIPT.search(response.content.decode())


def test_an_api_answer_carries_it_too(operator):
    response = operator.get("/api/v1/coupons")

    assert response.status_code == 200
    assert policy_of(response)["default-src"] == ["'self'"]


@pytest.mark.parametrize("path", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_the_api_docs_start_without_inline_scripts(operator, path):
    response = operator.get(path)

    assert response.status_code == 200
    page = response.content.decode()
    assert not INLINE_SCRIPT.search(page)
    assert "fonts.googleapis.com" not in page


def test_swagger_ui_fetches_its_start_up_script_from_this_origin(operator):
    script = operator.get("/api/v1/docs/", {"script": ""})

    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()


def test_no_template_has_an_inline_script_or_event_handler():
    offenders = [
        f"{path.relative_to(ROOT)}: {match.group(0).strip()}"
        for path in [*ROOT.glob("templates/**/*.html"), *ROOT.glob("*/templates/**/*.html")]
        for pattern in (INLINE_SCRIPT, INLINE_HANDLER)
        for match in pattern.finditer(path.read_text())
    ]

    assert offenders == []

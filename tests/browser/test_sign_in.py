"""Signing in to the console in a real browser."""

import pytest

from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_support_signs_in_and_sees_only_their_navigation(page, person):
    person("support", "sam")
    page.goto("/")
    assert "/login/" in page.url

    sign_in(page, "sam")

    assert page.get_by_role("button", name="Sign out").is_visible()
    assert page.get_by_text("sam · support").is_visible()
    assert page.get_by_role("link", name="Policies").count() == 0

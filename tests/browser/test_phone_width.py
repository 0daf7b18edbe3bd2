"""At 390 px (a phone) the console pages this release touched fit the screen in both languages:
wide content (the ledger's columns, a lock id) scrolls or wraps in its own box, never the page."""

import pytest

from tests.browser.conftest import sign_in
from tests.browser.test_chinese import switch_to_chinese
from tests.console.incident import incident_coupon

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def page_overflow(page) -> int:
    """How far the page is wider than the screen, in CSS pixels (0 when it fits)."""
    return page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth")


def test_the_console_fits_a_phone_in_english_and_chinese(page, person, template, clock):
    coupon = incident_coupon(template, clock)
    person("support", "sam")
    page.set_viewport_size(PHONE)
    sign_in(page, "sam")
    paths = ["/", f"/coupons/{coupon.pk}/", "/cases/", "/policies/"]

    for path in paths:
        page.goto(path)
        assert page_overflow(page) == 0, path
    switch_to_chinese(page)
    for path in paths:
        page.goto(path)
        assert page_overflow(page) == 0, path


def test_the_overflow_measure_sees_a_page_wider_than_the_phone(page, person):
    person("support", "sam")
    page.set_viewport_size(PHONE)
    sign_in(page, "sam")
    page.evaluate("document.body.insertAdjacentHTML('beforeend', "
                  "'<div style=\"width: 1200px\">wide</div>')")

    assert page_overflow(page) > 0

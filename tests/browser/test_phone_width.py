"""At 390 px (a phone) the console pages this release touched fit the screen in both languages:
wide content (the ledger's columns, a lock id) scrolls or wraps in its own box, never the page.
The header's search box shows its whole placeholder there and at 1366 px."""

import pytest

from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.browser.test_chinese import switch_to_chinese
from tests.refunds.conftest import default_policy  # noqa: F401 (a transactional test's flush drops it)
from tests.timeline.incident import incident_coupon
from tests.timeline.queue_objects import fresh_coupon, late_payment_case, pending_decision, proposal

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


def search_box_cut(page) -> float:
    """How many CSS pixels of the search box's placeholder are hidden (0 when it all shows):
    the placeholder's width in the box's own font against the box's inner width."""
    return page.evaluate("""() => {
        const box = document.getElementById("search-box");
        const style = getComputedStyle(box);
        const pen = document.createElement("canvas").getContext("2d");
        pen.font = style.font;
        const room = box.clientWidth - parseFloat(style.paddingLeft)
                     - parseFloat(style.paddingRight);
        return Math.max(0, pen.measureText(box.placeholder).width - room);
    }""")


def test_the_queues_fit_a_phone_with_their_buttons_in_english_and_chinese(
        page, person, template, clock, default_policy):  # noqa: F811
    late_payment_case(fresh_coupon(template, "u1"), order_id="order-case")
    pending_decision(fresh_coupon(template, "u2"), order_id="order-refund")
    proposal(fresh_coupon(template, "u3"), proposer="user:someone-else")
    person("operator", "olga")
    page.set_viewport_size(PHONE)
    sign_in(page, "olga")
    paths = ["/cases/", "/approvals/", "/compensations/"]

    for path in paths:
        page.goto(path)
        assert page.locator("main form.action").count() > 0, path  # the buttons are there
        assert page_overflow(page) == 0, path
        assert search_box_cut(page) == 0, path
    assert axe_violations(page) == []
    switch_to_chinese(page)
    for path in paths:
        page.goto(path)
        assert page_overflow(page) == 0, path
        assert search_box_cut(page) == 0, path


@pytest.mark.parametrize("width", [1366, 390])
def test_the_header_search_box_is_never_cut(page, person, width):
    person("operator", "olga")  # the longest navigation bar
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, "olga")

    assert search_box_cut(page) == 0
    switch_to_chinese(page)
    assert search_box_cut(page) == 0


def test_the_search_measure_sees_a_cut_placeholder(page, person):
    person("operator", "olga")
    sign_in(page, "olga")
    page.evaluate("document.getElementById('search-box').style.width = '6rem'")

    assert search_box_cut(page) > 0

"""At 1366 px the operator's coupon page fits the window: the ledger scrolls in its own box,
so "Propose compensation" stays reachable and the page itself never scrolls sideways."""

import pytest

from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.timeline.incident import incident_coupon

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_ledger_scrolls_in_its_own_box_at_1366(page, person, template, clock):
    coupon = incident_coupon(template, clock)
    person("operator", "olga")
    page.set_viewport_size({"width": 1366, "height": 800})
    sign_in(page, "olga", f"/coupons/{coupon.pk}/")

    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    box = page.get_by_role("region", name="Ledger rows (scroll sideways for more columns)")
    assert box.evaluate("el => getComputedStyle(el).overflowX") == "auto"
    propose = box.get_by_role("link", name="Propose compensation").first
    propose.scroll_into_view_if_needed()
    assert propose.is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    assert axe_violations(page) == []

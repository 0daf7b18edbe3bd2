"""Support reads the incident on the coupon page in a real browser."""

import pytest

from tests.browser.conftest import sign_in
from tests.timeline.history import long_history
from tests.timeline.incident import incident_coupon

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_support_searches_the_late_order_and_reads_the_incident_in_order(
    page, person, template, clock,
):
    coupon = incident_coupon(template, clock)
    person("support", "sam")
    sign_in(page, "sam")

    # Order A no longer holds the coupon; searching it still finds the coupon.
    page.keyboard.press("/")
    page.keyboard.type("order_demo_A")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/coupons/{coupon.pk}/")

    assert page.get_by_role("heading", name=f"Coupon {coupon.pk}").is_visible()
    titles = page.locator("#timeline .tl-title").all_inner_texts()
    assert titles == [  # words, each code in its badge
        "issue ISSUE ∅→available AVAILABLE (v1)",
        "lock LOCK available AVAILABLE→locked LOCKED (v2)",
        "release RELEASE locked LOCKED→available AVAILABLE (v3)",
        "lock LOCK available AVAILABLE→locked LOCKED (v4)",
        "redeem REDEEM refused: not the current lease TOKEN_MISMATCH",
        "redeem REDEEM locked LOCKED→used USED (v5)",
    ]
    refusal = page.locator("#timeline .tl-refusal")
    assert refusal.is_visible() and "order_demo_A" in refusal.inner_text()
    assert page.get_by_text("every invariant holds").is_visible()

    # A deep link opens the page with that entry highlighted.
    refusal.get_by_title("Link to this entry").click()
    page.wait_for_load_state()
    assert page.locator("#timeline .tl-entry:target .tl-title").inner_text() == (
        "redeem REDEEM refused: not the current lease TOKEN_MISMATCH")


def test_support_pages_back_through_a_long_timeline_without_reloading(
    page, person, coupon, clock,
):
    coupon = long_history(coupon, clock, ledger_rows=120)
    person("support", "sam")
    sign_in(page, "sam", next_path=f"/coupons/{coupon.pk}/")
    titles = page.locator("#timeline .tl-title")
    assert titles.last.inner_text().endswith("(v120)")
    page.evaluate("window.notReloaded = true")

    page.locator("#timeline").get_by_role("link", name="← Earlier").click()
    page.wait_for_url("**before=*")

    assert not titles.last.inner_text().endswith("(v120)")
    assert page.evaluate("window.notReloaded") is True  # htmx swapped the timeline in place
    page.locator("#ledger").get_by_role("link", name="← Earlier").click()
    page.wait_for_url("**ledger_page=2*")
    assert page.locator("#ledger tbody tr").first.get_attribute("id") == "op-51"
    assert page.evaluate("window.notReloaded") is True

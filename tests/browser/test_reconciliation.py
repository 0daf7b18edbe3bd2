"""An operator works through reconciliation findings in a real browser."""

import re

import pytest

from coupons.models import CouponOperation
from tests.browser.conftest import sign_in
from tests.operations.reconciliation.conftest import closed_order_still_locked

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_operator_applies_a_release_from_the_findings_page(page, person, template, ctx):
    finding = closed_order_still_locked(template, ctx)
    person("operator", "olga")
    sign_in(page, "olga")

    page.get_by_role("link", name="Reconciliation").click()
    row = page.locator(f"#finding-{finding.pk}")
    assert "ended (OrderClosed) unpaid" in row.inner_text()
    row.get_by_role("button", name=re.compile("^Apply")).click()
    page.wait_for_load_state()

    assert page.get_by_role("status").inner_text() == (
        f"Finding {finding.pk} applied: release the ended order's lease.")
    assert page.get_by_text("No open findings").is_visible()
    assert CouponOperation.objects.filter(coupon=finding.coupon, op_type="RELEASE",
                                          actor="olga").count() == 1


def test_the_coupon_link_opens_the_coupons_page(page, person, template, ctx):
    finding = closed_order_still_locked(template, ctx)
    person("operator", "olga")
    sign_in(page, "olga", next_path="/reconciliation/")

    page.get_by_role("link", name=f"coupon {finding.coupon_id}").click()

    assert page.url.endswith(f"/coupons/{finding.coupon_id}/")
    assert page.get_by_role("heading", name=re.compile(f"Coupon {finding.coupon_id}")).is_visible()

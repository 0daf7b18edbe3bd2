"""Support finds a coupon by an order id in a real browser."""

import pytest

from coupons.services import coupon_release
from tests.browser.conftest import sign_in
from tests.conftest import lock

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_support_types_an_order_id_and_lands_on_its_coupon(page, person, coupon, ctx):
    # order-A held the coupon, was closed, and order-B holds it now: A still finds it.
    _, proof = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx, reason="order closed")
    lock(coupon, ctx, order_id="order-B")
    person("support", "sam")
    sign_in(page, "sam")

    page.keyboard.press("/")  # the search box takes the focus from anywhere
    page.keyboard.type("order-A")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/coupons/{coupon.pk}/")

    assert page.get_by_role("heading", level=1).inner_text().startswith(f"Coupon {coupon.pk}")

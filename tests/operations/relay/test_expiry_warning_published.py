"""The presale expiry warning leaves through the relay like every event, after its coupon's
LOCK, routed by its type."""

import pytest

from operations.scanners import scan_presale_expiry
from tests.coupons.events.test_presale import deposit, issue, presale_template

pytestmark = pytest.mark.django_db


def test_the_warning_is_published_after_the_lock_it_warns_about(
    clock, send, broker_queue, make_relay
):
    coupon = issue(presale_template("presale", "STRICT"))
    deposit(send, coupon)
    scan_presale_expiry()

    make_relay().run_batch()

    messages = broker_queue.drain()
    assert [m["routing_key"] for m in messages] == [
        "CouponIssued", "CouponLocked", "CouponExpiresBeforeFinalPayment"]
    warning = messages[-1]
    assert warning["headers"]["state_version"] == 2  # the LOCK's version: no new version
    assert warning["body"]["order_id"] == "PS-1"
    assert warning["body"]["coupon_id"] == coupon.pk

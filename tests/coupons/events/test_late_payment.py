import pytest

from coupons.models import ConflictCase, Redemption
from tests.conftest import lock

pytestmark = pytest.mark.django_db


def test_payment_redeems_the_orders_lease(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    answer = send("PaymentSucceeded", order_id="A", payment_id="P-A")
    assert answer["status"] == "PROCESSED"
    assert answer["outcome"]["action"] == "REDEEMED"
    coupon.refresh_from_db()
    assert coupon.status == "USED"


def test_late_payment_after_release_and_relock_opens_a_refund_case(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    assert send("OrderClosed", order_id="A")["outcome"]["action"] == "RELEASED"
    _, proof_b = lock(coupon, ctx, order_id="B")
    answer = send("PaymentSucceeded", order_id="A", payment_id="P-A")
    outcome = answer["outcome"]
    assert outcome["action"] == "CASE_OPENED"
    assert outcome["error_code"] == "TOKEN_MISMATCH"
    assert outcome["recommendation"] == "ORDER_DISCOUNT_REFUND"
    coupon.refresh_from_db()
    assert (coupon.status, coupon.locked_order_id) == ("LOCKED", "B")
    assert not Redemption.objects.exists()
    assert ConflictCase.objects.get().status == "OPEN"


def test_duplicate_message_takes_effect_once(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    first = send("PaymentSucceeded", message_id="same", order_id="A", payment_id="P-A")
    second = send("PaymentSucceeded", message_id="same", order_id="A", payment_id="P-A")
    assert second["status"] == "DUPLICATE"
    assert second["outcome"] == first["outcome"]
    assert Redemption.objects.count() == 1

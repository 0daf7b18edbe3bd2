"""Refund decisions at their edges: two coupons on one order, a refund above what was paid, a
refund received before its redemption, and another order redeeming a coupon a refund waits on."""

import pytest

from coupons.models import UserCoupon
from coupons.services import coupon_issue, coupon_redeem, coupon_release
from refunds.models import ReturnPolicy
from refunds.services.policies import policy_draft_create, policy_publish
from tests.conftest import lock
from tests.refunds.conftest import redeem

pytestmark = pytest.mark.django_db


def post_refund(api, refund_id="r-1", order_id="order-A", amount="270.00", refund_type="FULL"):
    answer = api.post(
        "/api/v1/refunds",
        {"refund_id": refund_id, "order_id": order_id, "payment_id": f"pay-{order_id}",
         "refund_amount": amount, "refund_type": refund_type},
        format="json", HTTP_IDEMPOTENCY_KEY=f"refund-{refund_id}-{amount}",
    )
    assert answer.status_code == 201, answer.json()
    return answer.json()["decisions"]


def status_of(coupon):
    return UserCoupon.objects.get(pk=coupon.pk).status


def test_a_full_refund_of_an_order_with_two_coupons_decides_each_coupon(api, template, ctx):
    first, second = (coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
                     for _ in range(2))
    redeem(first, ctx)  # order-A: 300.00 with 30.00 off from each coupon, 240.00 paid
    redeem(second, ctx)

    decisions = post_refund(api, amount="240.00")
    again = post_refund(api, amount="240.00")

    assert [d["coupon_id"] for d in decisions] == [first.pk, second.pk]
    assert len({d["id"] for d in decisions}) == 2
    assert [d["coupon_decision"]["action"] for d in decisions] == ["RETURN", "RETURN"]
    assert [d["money_decision"]["coupon_share"] for d in decisions] == ["30.00", "30.00"]
    assert (status_of(first), status_of(second)) == ("AVAILABLE", "AVAILABLE")
    # The same refund again answers the same two decisions, one per coupon.
    assert [d["id"] for d in again] == [d["id"] for d in decisions]


def test_a_refund_above_what_was_paid_gives_back_the_whole_discount_and_no_more(api, coupon, ctx):
    redeem(coupon, ctx)  # 300.00 order, 30.00 off, 270.00 paid

    [decision] = post_refund(api, amount="540.00")

    assert decision["money_decision"]["coupon_share"] == "30.00"
    assert decision["coupon_decision"]["facts"]["refunded_share"] == "1.0000"


def test_a_refund_received_before_its_redemption_counts_zero_days(api, coupon, ctx, clock):
    # Only a refund at least zero days after the redemption returns the coupon.
    default = ReturnPolicy.objects.get(code="default")
    rules = [{"label": "Not before the redemption", "when": {"days_since_redemption_min": 0},
              "action": "RETURN"},
             {"label": "Otherwise", "when": {}, "action": "KEEP_USED"}]
    policy_publish(policy_draft_create(default, "user:policy", rules=rules), "user:policy")
    clock.advance(minutes=1)
    _, proof = lock(coupon, ctx)
    [waiting] = post_refund(api)
    clock.advance(minutes=5)  # the redemption is stamped after the refund arrived

    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="pay-order-A", ctx=ctx)

    decided = api.get(f"/api/v1/refunds/{waiting['id']}").json()
    assert decided["coupon_decision"]["facts"]["days_since_redemption"] == 0
    assert decided["coupon_decision"]["action"] == "RETURN"
    assert status_of(coupon) == "AVAILABLE"


def test_a_redeem_by_another_order_leaves_a_waiting_refund_waiting(api, coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="order-A")
    [waiting] = post_refund(api, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx, reason="order-A let it go")

    redeem(coupon, ctx, order_id="order-B")

    still = api.get(f"/api/v1/refunds/{waiting['id']}").json()
    assert (still["status"], still["order_id"]) == ("AWAITING_REDEMPTION", "order-A")
    assert status_of(coupon) == "USED"

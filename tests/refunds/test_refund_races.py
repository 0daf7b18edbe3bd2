"""Refunds racing on PostgreSQL: real threads, each with its own connection."""

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from coupons.events.inbox import inbox_receive
from coupons.models import CouponOperation, UserCoupon
from coupons.services import CommandContext, coupon_lock
from refunds.models import RefundCoupon
from refunds.services import refund_receive
from tests.conftest import START
from tests.coupons.concurrency.threads import all_ok, race
from tests.refunds.conftest import issue, redeem

pytestmark = pytest.mark.django_db(transaction=True)


def ledger(coupon_id):
    return list(CouponOperation.objects.filter(coupon_id=coupon_id).order_by("to_version")
                .values_list("op_type", "to_version"))


def test_the_same_refund_by_api_and_by_fact_at_once_decides_once(
    default_policy, coupon, ctx, service_client
):
    redeem(coupon, ctx)
    key = service_client[1]

    def by_api():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        answer = client.post("/api/v1/refunds", {
            "refund_id": "r-1", "order_id": "order-A", "payment_id": "pay-order-A",
            "refund_amount": "270.00", "refund_type": "FULL",
        }, format="json", HTTP_IDEMPOTENCY_KEY="refund-r-1")
        return answer.status_code, [d["id"] for d in answer.json()["decisions"]]

    def by_fact(message_id):
        def call():
            result = inbox_receive(
                message_id=message_id, fact_type="RefundSucceeded", order_id="order-A",
                occurred_at=START, sender="client:refunds", sender_scope="client:refunds",
                payload={"order_id": "order-A", "payment_id": "pay-order-A", "refund_id": "r-1",
                         "refund_amount": "270.00", "refund_type": "FULL"},
            )
            return [d["id"] for d in result.message.outcome["decisions"]]
        return call

    (status, api_ids), *fact_ids = all_ok(race(by_api, by_fact("m-1"), by_fact("m-2")))

    decision = RefundCoupon.objects.get()
    assert status == 201
    assert api_ids == fact_ids[0] == fact_ids[1] == [decision.pk]
    assert (decision.action, decision.status) == ("RETURN", "EXECUTED")
    assert ledger(coupon.pk) == [("ISSUE", 1), ("LOCK", 2), ("REDEEM", 3), ("RETURN", 4)]


@pytest.mark.parametrize("attempt", range(4))
def test_a_return_racing_a_new_lock_never_loses_a_version(
    default_policy, template, ctx, attempt
):
    coupon = issue(template, ctx)
    redeem(coupon, ctx)

    def refund():
        return refund_receive(refund_id="r-1", order_id="order-A", payment_id="pay-order-A",
                              refund_amount=Decimal("270.00"), refund_type="FULL",
                              ctx=CommandContext(actor="refunds")).decisions[0].action

    def lock_again():
        return coupon_lock(coupon_id=coupon.pk, order_id="order-B", user_id="u1",
                           order_amount=Decimal("300.00"),
                           ctx=CommandContext(actor="orders")).state_version

    (returned, lock_outcome) = race(refund, lock_again)

    assert returned == ("ok", "RETURN")
    row = UserCoupon.objects.get(pk=coupon.pk)
    if lock_outcome == ("refused", "INVALID_STATE"):  # the lock came first, saw USED
        assert ledger(coupon.pk)[-1] == ("RETURN", 4)
        assert (row.status, row.state_version) == ("AVAILABLE", 4)
    else:  # the lock waited for the return's row lock, then took the returned coupon
        assert lock_outcome == ("ok", 5)
        assert ledger(coupon.pk)[-2:] == [("RETURN", 4), ("LOCK", 5)]
        assert (row.status, row.state_version, row.locked_order_id) == ("LOCKED", 5, "order-B")
    versions = [version for _, version in ledger(coupon.pk)]
    assert versions == list(range(1, len(versions) + 1))

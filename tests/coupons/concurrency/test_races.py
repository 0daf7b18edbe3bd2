"""Real races: threads, each with its own connection, released by one barrier.

They exercise the coupon row lock (SELECT ... FOR NO KEY UPDATE), the compare-and-set
behind it and the Idempotency-Key claim's unique index.
"""

from collections import Counter
from decimal import Decimal
from functools import partial

import pytest
from rest_framework.test import APIClient

from coupons.models import (
    CouponLock,
    CouponOperation,
    IdempotencyRecord,
    LockStatus,
    OperationType,
    Redemption,
    UserCoupon,
)
from coupons.services import (
    CommandContext,
    coupon_issue,
    coupon_lock,
    coupon_redeem,
    coupon_release,
)
from tests.conftest import lock
from tests.coupons.concurrency.threads import race

pytestmark = pytest.mark.django_db(transaction=True)

def api_client(key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def ledger(coupon_id):
    return list(CouponOperation.objects.filter(coupon_id=coupon_id).order_by("to_version")
                .values_list("op_type", "to_version"))


def test_thirty_two_orders_racing_to_lock_one_coupon_leave_exactly_one_lease(
    coupon, service_client
):
    key = service_client[1]

    def lock_for(order_id):
        def call():
            answer = api_client(key).post(
                f"/api/v1/coupons/{coupon.pk}/lock",
                {"order_id": order_id, "user_id": "u1", "order_amount": "300.00"},
                format="json", HTTP_IDEMPOTENCY_KEY=f"quote-{order_id}",
            )
            return answer.status_code, answer.json()
        return call

    outcomes = race(*(lock_for(f"order-{n:02}") for n in range(32)))

    answers = [value for _, value in outcomes]
    winners = [body for status, body in answers if status == 200]
    losers = [body for status, body in answers if status != 200]
    assert len(winners) == 1, answers
    assert {status for status, _ in answers} == {200, 409}, answers
    assert {body["error"]["code"] for body in losers} == {"INVALID_STATE"}
    row = UserCoupon.objects.get(pk=coupon.pk)
    assert (row.status, row.state_version, row.locked_order_id) == (
        "LOCKED", 2, winners[0]["order_id"]
    )
    assert CouponLock.objects.filter(coupon=coupon).count() == 1
    assert ledger(coupon.pk) == [("ISSUE", 1), ("LOCK", 2)]
    # Every loser's key holds its refusal, so its retry answers the same without racing again.
    assert IdempotencyRecord.objects.filter(
        status=IdempotencyRecord.Status.COMPLETED, response_status=409
    ).count() == 31


def test_redeem_racing_release_on_one_lease_takes_effect_exactly_once(template, clock):
    ctx = CommandContext(actor="race")
    winners = Counter()
    for round_number in range(20):
        coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
        _, proof = lock(coupon, ctx, order_id=f"order-{round_number}")

        redeem_outcome, release_outcome = race(
            partial(coupon_redeem, coupon_id=coupon.pk, lease=proof,
                    payment_id=f"pay-{round_number}", ctx=ctx),
            partial(coupon_release, coupon_id=coupon.pk, lease=proof, reason="order closed",
                    ctx=ctx),
        )

        kinds = (redeem_outcome[0], release_outcome[0])
        assert sorted(kinds) == ["ok", "refused"], (round_number, redeem_outcome, release_outcome)
        loser_code = redeem_outcome[1] if kinds[0] == "refused" else release_outcome[1]
        # The loser finds the coupon already out of LOCKED (or, at worst, a newer version).
        assert loser_code in {"INVALID_STATE", "VERSION_CONFLICT"}
        row = UserCoupon.objects.get(pk=coupon.pk)
        redemptions = Redemption.objects.filter(coupon=coupon)
        [the_lock] = CouponLock.objects.filter(coupon=coupon)
        if kinds[0] == "ok":
            winners["redeem"] += 1
            assert (row.status, row.state_version) == ("USED", 3)
            assert redemptions.count() == 1
            assert the_lock.status == LockStatus.CONSUMED
            assert [op for op, _ in ledger(coupon.pk)] == ["ISSUE", "LOCK", "REDEEM"]
        else:
            winners["release"] += 1
            assert (row.status, row.state_version) == ("AVAILABLE", 3)
            assert not redemptions.exists()
            assert the_lock.status == LockStatus.RELEASED
            assert [op for op, _ in ledger(coupon.pk)] == ["ISSUE", "LOCK", "RELEASE"]
    assert sum(winners.values()) == 20


def test_sixteen_identical_lock_requests_with_one_idempotency_key_lock_once(
    coupon, service_client
):
    key = service_client[1]
    body = {"order_id": "order-A", "user_id": "u1", "order_amount": "300.00",
            "quote_id": "quote-1"}

    def send():
        answer = api_client(key).post(f"/api/v1/coupons/{coupon.pk}/lock", body, format="json",
                                      HTTP_IDEMPOTENCY_KEY="lock-order-A-quote-1")
        return answer.status_code, answer.json()

    outcomes = race(*([send] * 16))

    answers = [value for _, value in outcomes]
    assert all(status in (200, 409) for status, _ in answers), answers
    in_flight = [body for status, body in answers if status == 409]
    assert all(b["error"]["code"] == "IDEMPOTENCY_REQUEST_IN_PROGRESS" for b in in_flight)
    locked = [body for status, body in answers if status == 200]
    assert locked, answers
    assert len({(b["lock_id"], b["lock_token"], b["state_version"]) for b in locked}) == 1
    assert CouponOperation.objects.filter(coupon=coupon, op_type=OperationType.LOCK).count() == 1
    assert CouponLock.objects.filter(coupon=coupon).count() == 1
    [record] = IdempotencyRecord.objects.all()
    assert (record.status, record.response_status) == (IdempotencyRecord.Status.COMPLETED, 200)


def test_lock_race_through_the_service_has_one_winner_and_no_deadlock(coupon):
    ctx = CommandContext(actor="race")

    outcomes = race(*(
        partial(coupon_lock, coupon_id=coupon.pk, order_id=f"order-{n:02}", user_id="u1",
                order_amount=Decimal("300.00"), ctx=ctx)
        for n in range(32)
    ))

    kinds = Counter(kind for kind, _ in outcomes)
    assert kinds == {"ok": 1, "refused": 31}, outcomes
    assert {value for kind, value in outcomes if kind == "refused"} == {"INVALID_STATE"}
    assert CouponLock.objects.filter(coupon=coupon, status=LockStatus.ACTIVE).count() == 1

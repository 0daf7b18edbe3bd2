"""GET /api/v1/coupons/{id}/check answers "why can't I use my coupon?" under "diagnosis"."""

from datetime import timedelta
from decimal import Decimal

import pytest

from coupons.models import ConflictCase
from coupons.services import (
    CommandContext,
    coupon_expire,
    coupon_issue,
    coupon_redeem,
    coupon_void,
    template_create,
)
from coupons.services.cases import case_resolve
from coupons.write.payloads import iso
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db

VALID_UNTIL = START + timedelta(days=30)  # the `template` fixture's valid_days


def diagnosis(api, coupon) -> dict:
    response = api.get(f"/api/v1/coupons/{coupon.pk}/check")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["ok"], body  # every situation here is a healthy ledger
    return body["diagnosis"]


def test_usable_coupon_says_so_with_its_end_and_threshold(api, coupon):
    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is True
    assert answer["verdict"] == f"Usable now until {iso(VALID_UNTIL)}."
    assert "200.00" in answer["support_action"]  # the minimum order amount to check
    assert answer["open_case_ids"] == []


def test_coupon_not_yet_valid_says_when_it_starts(api, clock, ctx):
    starts = START + timedelta(days=2)
    template = template_create(
        code="summer", name="summer", kind="AMOUNT_OFF", face_value=Decimal("10.00"),
        valid_from=starts, valid_until=starts + timedelta(days=7),
    )
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is False
    assert "Not usable yet" in answer["verdict"]
    assert iso(starts) in answer["verdict"]

    clock.set(starts)
    assert diagnosis(api, coupon)["can_use_now"] is True


@pytest.mark.parametrize("past", [timedelta(0), timedelta(days=3)], ids=["at", "after"])
def test_coupon_past_valid_until_but_not_yet_scanned_is_not_usable(api, clock, coupon, past):
    clock.set(VALID_UNTIL + past)

    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is False
    assert iso(VALID_UNTIL) in answer["verdict"]
    assert "expiry scan has not marked it" in answer["verdict"]
    assert "expiry scan" in answer["support_action"]


def test_locked_coupon_names_the_order_and_the_lease_end(api, clock, coupon, ctx):
    result, _ = lock(coupon, ctx, order_id="ORDER-X", lease_seconds=600)
    clock.advance(minutes=5)

    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is False
    assert answer["verdict"] == f"Locked by order ORDER-X until {iso(result.lock.expires_at)}."
    assert "ORDER-X" in answer["support_action"]


def test_locked_coupon_whose_lease_ended_says_the_scanner_will_release_it(
    api, clock, coupon, ctx,
):
    result, _ = lock(coupon, ctx, order_id="ORDER-X", lease_seconds=600)
    clock.advance(minutes=11)

    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is False
    assert "ORDER-X" in answer["verdict"]
    assert f"lease ended at {iso(result.lock.expires_at)}" in answer["verdict"]
    assert "lease scan will release it" in answer["verdict"]
    assert "close it" in answer["support_action"]
    assert "ORDER-X" in answer["support_action"]


def test_used_coupon_names_the_order_payment_and_time(api, clock, coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="ORDER-X")
    clock.advance(minutes=3)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="PAY-7", ctx=ctx)

    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is False
    assert answer["verdict"] == (
        f"Used by order ORDER-X (payment PAY-7) at {iso(START + timedelta(minutes=3))}."
    )
    assert "refund" in answer["support_action"]


def test_coupon_expired_by_the_scanner_says_when(api, clock, coupon, ctx):
    clock.set(VALID_UNTIL + timedelta(hours=1))
    coupon_expire(coupon_id=coupon.pk, expected_version=1,
                  ctx=CommandContext(actor="system:expiry-scanner"))

    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is False
    assert answer["verdict"] == f"Expired at {iso(VALID_UNTIL)}."
    assert "cannot be used again" in answer["support_action"]


def test_coupon_released_to_expired_names_the_order_that_held_it(api, clock, coupon, ctx, send):
    lock(coupon, ctx, order_id="ORDER-X", lease_until=VALID_UNTIL + timedelta(days=1))
    clock.set(VALID_UNTIL + timedelta(hours=1))
    send("OrderClosed", order_id="ORDER-X")

    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is False
    assert iso(VALID_UNTIL) in answer["verdict"]
    assert "released from order ORDER-X" in answer["verdict"]


@pytest.mark.parametrize("locked_first", [False, True], ids=["available", "locked"])
def test_voided_coupon_gives_the_reason_and_time(api, clock, coupon, ctx, locked_first):
    if locked_first:
        lock(coupon, ctx, order_id="ORDER-X")
    clock.advance(hours=2)
    coupon.refresh_from_db()
    coupon_void(coupon_id=coupon.pk, expected_version=coupon.state_version,
                reason="risk: shared on a coupon forum", ctx=ctx)

    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is False
    assert answer["verdict"] == (
        f"Voided at {iso(START + timedelta(hours=2))}: risk: shared on a coupon forum."
    )
    assert "cannot be used again" in answer["support_action"]


def test_open_conflict_case_is_mentioned_with_the_operator_action(api, coupon, ctx, send):
    lock(coupon, ctx, order_id="ORDER-A")
    send("OrderClosed", order_id="ORDER-A")
    lock(coupon, ctx, order_id="ORDER-B")
    case_id = send("PaymentSucceeded", order_id="ORDER-A", payment_id="P-A")["outcome"][
        "case_id"
    ]

    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is False
    assert answer["open_case_ids"] == [case_id]
    assert answer["verdict"].startswith("Locked by order ORDER-B")
    assert f"Conflict case #{case_id} is open for order ORDER-A" in answer["verdict"]
    assert answer["support_action"].startswith(
        f"An operator must resolve conflict case #{case_id} "
        "(recommended: ORDER_DISCOUNT_REFUND)."
    )


def test_available_coupon_with_an_open_case_is_usable_but_mentions_the_case(
    api, coupon, ctx, send,
):
    lock(coupon, ctx, order_id="ORDER-A")
    send("OrderClosed", order_id="ORDER-A")
    case_id = send("PaymentSucceeded", order_id="ORDER-A", payment_id="P-A")["outcome"][
        "case_id"
    ]

    answer = diagnosis(api, coupon)

    assert answer["can_use_now"] is True
    assert f"Conflict case #{case_id}" in answer["verdict"]
    assert "recommended: COMPENSATING_REDEEM" in answer["support_action"]


def test_resolved_case_is_no_longer_mentioned(api, coupon, ctx, send):
    lock(coupon, ctx, order_id="ORDER-A")
    send("OrderClosed", order_id="ORDER-A")
    send("PaymentSucceeded", order_id="ORDER-A", payment_id="P-A")
    case = ConflictCase.objects.get()
    case_resolve(case_id=case.pk, action="DISMISS", note="paid in full, no claim",
                 ctx=CommandContext(actor="user:alice"))

    answer = diagnosis(api, coupon)

    assert answer["open_case_ids"] == []
    assert "Conflict case" not in answer["verdict"]
    assert "conflict case" not in answer["support_action"]

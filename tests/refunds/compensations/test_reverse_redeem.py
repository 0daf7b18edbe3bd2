"""A wrong redeem, reversed: proposed by one operator, approved by another, history kept."""

from datetime import timedelta

import pytest

from coupons.models import OutboxEvent, Redemption, UserCoupon
from coupons.services import coupon_redeem
from refunds.models import Compensation
from tests.command_checks import events, ledger, world
from tests.conftest import lock
from tests.refunds.compensations.conftest import approve, ok, propose

pytestmark = pytest.mark.django_db


def test_proposal_changes_nothing_but_records_who_asked_and_why(alice, redeemed):
    coupon = redeemed.coupon
    before = world()

    body = ok(propose(alice, redeemed, key="p-1", reason="the cashier scanned the wrong order"),
              201)

    assert world() == before
    assert (body["kind"], body["status"], body["coupon_id"], body["operation_id"]) == (
        "REVERSE_OPERATION", "PROPOSED", coupon.pk, redeemed.pk,
    )
    assert (body["order_id"], body["amount"], body["proposed_by"]) == (
        "order-A", None, "user:alice",
    )
    assert (body["decided_by"], body["decided_at"], body["resulting_operation"]) == (
        "", None, None,
    )
    stored = Compensation.objects.get(pk=body["id"])
    assert (stored.idempotency_key, len(stored.request_hash)) == ("p-1", 64)
    assert stored.reason == "the cashier scanned the wrong order"


def test_approved_reversal_appends_reverse_and_keeps_the_redemption(alice, bob, clock, redeemed):
    coupon = redeemed.coupon
    proposal = ok(propose(alice, redeemed), 201)
    clock.advance(minutes=5)

    body = ok(approve(bob, proposal["id"], key="a-1", note="checked with the store"))

    assert (body["status"], body["decided_by"], body["decision_note"]) == (
        "APPROVED", "user:bob", "checked with the store",
    )
    assert body["decided_at"] == clock.now().isoformat().replace("+00:00", "Z")
    row = body["resulting_operation"]
    assert (row["op_type"], row["from_state"], row["to_state"], row["original_operation_id"]) == (
        "REVERSE", "USED", "AVAILABLE", redeemed.pk,
    )
    assert (row["from_version"], row["to_version"], row["actor"], row["amount"]) == (
        3, 4, "user:bob", None,
    )
    assert ledger(coupon) == [
        ("ISSUE", "", "AVAILABLE", 0, 1),
        ("LOCK", "AVAILABLE", "LOCKED", 1, 2),
        ("REDEEM", "LOCKED", "USED", 2, 3),
        ("REVERSE", "USED", "AVAILABLE", 3, 4),
    ]
    assert events(coupon)[-1] == "CouponOperationReversed"
    event = OutboxEvent.objects.filter(coupon=coupon).latest("pk")
    assert event.payload["original_operation_id"] == redeemed.pk
    assert (event.payload["to_state"], event.payload["state_version"]) == ("AVAILABLE", 4)
    # The redemption is kept as a fact; it just no longer counts.
    redemption = Redemption.objects.get(coupon=coupon)
    assert (redemption.order_id, redemption.succeeded) == ("order-A", False)
    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version, coupon.current_lock_id) == ("AVAILABLE", 4, None)


def test_a_reversed_coupon_can_be_locked_and_redeemed_again(alice, bob, ctx, redeemed):
    coupon = redeemed.coupon
    ok(approve(bob, ok(propose(alice, redeemed), 201)["id"]))

    _, proof = lock(coupon, ctx, order_id="order-B")
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="pay-B", ctx=ctx)

    assert sorted(Redemption.objects.filter(coupon=coupon)
                  .values_list("order_id", "succeeded")) == [("order-A", False), ("order-B", True)]


def test_reversing_a_redeem_past_valid_until_lands_on_expired(alice, bob, clock, redeemed):
    coupon = redeemed.coupon
    proposal = ok(propose(alice, redeemed), 201)
    clock.set(coupon.valid_until + timedelta(minutes=1))

    row = ok(approve(bob, proposal["id"]))["resulting_operation"]

    assert (row["from_state"], row["to_state"]) == ("USED", "EXPIRED")
    assert UserCoupon.objects.get(pk=coupon.pk).status == "EXPIRED"

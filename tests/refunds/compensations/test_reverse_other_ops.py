"""Reversing VOID, EXPIRE and RETURN; and the operations that cannot be reversed."""

from datetime import timedelta
from decimal import Decimal

import pytest

from coupons.models import (
    CommandRejection,
    CouponLock,
    OperationType,
    Redemption,
    UserCoupon,
)
from coupons.services import coupon_expire, coupon_release, coupon_void
from coupons.services.reversals import INSTEAD
from refunds.models import Compensation
from refunds.services.refund_receive import refund_receive
from tests.command_checks import ledger, world
from tests.conftest import lock
from tests.refunds.compensations.conftest import approve, error, last_op, ok, propose

pytestmark = pytest.mark.django_db


def reverse(alice, bob, operation) -> dict:
    """Propose and approve the reversal; answers the REVERSE ledger row."""
    return ok(approve(bob, ok(propose(alice, operation), 201)["id"]))["resulting_operation"]


def void(coupon, ctx):
    coupon.refresh_from_db()
    coupon_void(coupon_id=coupon.pk, expected_version=coupon.state_version, reason="risk",
                ctx=ctx)
    return last_op(coupon, OperationType.VOID)


# --- VOID ---------------------------------------------------------------------------------


def test_void_of_an_available_coupon_is_reversed_to_available(alice, bob, coupon, ctx):
    row = reverse(alice, bob, void(coupon, ctx))

    assert (row["from_state"], row["to_state"]) == ("VOID", "AVAILABLE")
    assert [step[0] for step in ledger(coupon)] == ["ISSUE", "VOID", "REVERSE"]


def test_void_of_a_locked_coupon_is_reversed_to_available_without_the_lease(
    alice, bob, coupon, ctx,
):
    lock(coupon, ctx, order_id="order-A")
    voided = void(coupon, ctx)

    row = reverse(alice, bob, voided)

    assert (row["from_state"], row["to_state"]) == ("VOID", "AVAILABLE")
    coupon.refresh_from_db()
    assert (coupon.status, coupon.current_lock_id, coupon.locked_order_id) == (
        "AVAILABLE", None, None,
    )
    # The lease the void ended stays ended: its token can never act again.
    assert list(CouponLock.objects.filter(coupon=coupon).values_list("status", flat=True)) == [
        "RELEASED",
    ]


def test_void_of_a_used_coupon_is_reversed_to_used_and_its_redemption_still_counts(
    alice, bob, redeemed, ctx,
):
    coupon = redeemed.coupon
    row = reverse(alice, bob, void(coupon, ctx))

    assert (row["from_state"], row["to_state"]) == ("VOID", "USED")
    assert list(Redemption.objects.filter(coupon=coupon).values_list("succeeded", flat=True)) == [
        True,
    ]


# --- EXPIRE -------------------------------------------------------------------------------


def test_an_expiry_made_on_a_skewed_clock_is_reversed_to_available(
    alice, bob, clock, coupon, ctx,
):
    # The expiry scanner ran with a clock a day ahead: it expired the coupon a day early.
    real_now = clock.now()
    clock.set(coupon.valid_until + timedelta(hours=1))
    coupon_expire(coupon_id=coupon.pk, expected_version=1, ctx=ctx)
    clock.set(real_now)

    row = reverse(alice, bob, last_op(coupon, OperationType.EXPIRE))

    assert (row["from_state"], row["to_state"], row["to_version"]) == ("EXPIRED", "AVAILABLE", 3)


def test_an_expiry_past_valid_until_has_nothing_to_restore(alice, clock, coupon, ctx):
    clock.set(coupon.valid_until + timedelta(hours=1))
    coupon_expire(coupon_id=coupon.pk, expected_version=1, ctx=ctx)
    before = world()

    details = error(propose(alice, last_op(coupon, OperationType.EXPIRE)), 409, "INVALID_STATE")

    assert (details["current_state"], details["current_version"]) == ("EXPIRED", 2)
    assert world() == before
    assert not Compensation.objects.exists()


# --- RETURN -------------------------------------------------------------------------------


def returned(redeem, ctx):
    """A RETURN as a full refund under the default policy writes it: it names the REDEEM it
    undoes, and the redemption stops counting."""
    refund_receive(refund_id="refund-1", order_id=redeem.order_id, payment_id=redeem.payment_id,
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    return last_op(redeem.coupon, OperationType.RETURN)


def test_a_wrong_return_is_reversed_to_used_and_its_redemption_counts_again(
    alice, bob, redeemed, ctx,
):
    coupon = redeemed.coupon
    wrong_return = returned(redeemed, ctx)

    row = reverse(alice, bob, wrong_return)

    assert (row["from_state"], row["to_state"], row["original_operation_id"]) == (
        "AVAILABLE", "USED", wrong_return.pk,
    )
    assert [step[0] for step in ledger(coupon)] == [
        "ISSUE", "LOCK", "REDEEM", "RETURN", "REVERSE",
    ]
    assert list(Redemption.objects.filter(coupon=coupon).values_list("succeeded", flat=True)) == [
        True,
    ]


def test_a_return_cannot_be_reversed_once_another_order_redeemed_the_coupon(
    alice, redeemed, ctx,
):
    from coupons.services import coupon_redeem

    wrong_return = returned(redeemed, ctx)
    _, proof = lock(redeemed.coupon, ctx, order_id="order-B")
    coupon_redeem(coupon_id=redeemed.coupon_id, lease=proof, payment_id="pay-B", ctx=ctx)

    details = error(propose(alice, wrong_return), 409, "VERSION_CONFLICT")

    assert details["moved_on_by"]["op_type"] == "LOCK"


# --- not reversible -----------------------------------------------------------------------


@pytest.mark.parametrize("op_type", ["ISSUE", "LOCK", "RELEASE", "REVERSE"])
def test_operations_that_cannot_be_reversed_are_refused_saying_what_to_do_instead(
    alice, bob, coupon, ctx, op_type,
):
    _, proof = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof, reason="order closed", ctx=ctx)
    if op_type == "REVERSE":
        reverse(alice, bob, void(coupon, ctx))
    operation = last_op(coupon, op_type)
    before = world()

    response = propose(alice, operation, key="not-reversible")

    details = error(response, 422, "OPERATION_NOT_REVERSIBLE")
    assert (details["op_type"], details["operation_id"]) == (op_type, operation.pk)
    assert str(INSTEAD[op_type]) in response.json()["error"]["message"]
    assert world() == before
    rejection = CommandRejection.objects.latest("id")
    assert (rejection.op_type, rejection.error_code, rejection.actor, rejection.coupon_id_ref) == (
        "COMP_PROPOSE", "OPERATION_NOT_REVERSIBLE", "user:alice", coupon.pk,
    )


def test_an_operation_of_another_coupon_is_not_found(alice, redeemed, template, ctx):
    from coupons.services import coupon_issue

    other = coupon_issue(template_id=template.pk, user_id="u2", ctx=ctx).coupon
    response = alice.post(
        f"/api/v1/coupons/{other.pk}/operations/{redeemed.pk}/compensate",
        {"reason": "wrong"}, format="json", HTTP_IDEMPOTENCY_KEY="k",
    )

    error(response, 404, "NOT_FOUND")
    assert not Compensation.objects.exists()
    assert UserCoupon.objects.get(pk=redeemed.coupon_id).state_version == 3

from dataclasses import replace
from datetime import timedelta

import pytest

from coupons.models import CouponLock, CouponOperation, OutboxEvent, Redemption
from coupons.services import coupon_expire, coupon_redeem, coupon_release, coupon_void
from tests.command_checks import events, ledger, refused
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db


def void(coupon, ctx, expected_version, reason="campaign closed"):
    return coupon_void(coupon_id=coupon.pk, expected_version=expected_version, reason=reason,
                       ctx=ctx)


# --- happy path ---------------------------------------------------------------------------


def test_void_of_an_available_coupon(coupon, ctx):
    result = void(coupon, ctx, 1, reason="campaign closed early")

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("VOID", 2)
    assert result.payload() == {"coupon_id": coupon.pk, "state_version": 2, "status": "VOID"}
    assert ledger(coupon)[-1] == ("VOID", "AVAILABLE", "VOID", 1, 2)
    operation = CouponOperation.objects.get(coupon=coupon, op_type="VOID")
    assert (operation.reason, operation.order_id, operation.lock_id) == (
        "campaign closed early", "", None,
    )
    assert events(coupon) == ["CouponIssued", "CouponVoided"]
    assert OutboxEvent.objects.get(operation=operation).payload["to_state"] == "VOID"


def test_void_of_a_locked_coupon_ends_its_lease(coupon, ctx, clock):
    result, _ = lock(coupon, ctx, order_id="order-A")
    clock.advance(minutes=2)

    void(coupon, ctx, 2, reason="risk")

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("VOID", 3)
    assert (coupon.current_lock_id, coupon.locked_order_id, coupon.lock_token_hash,
            coupon.lock_expires_at) == (None, None, None, None)
    lease = CouponLock.objects.get(pk=result.lock.pk)
    assert (lease.status, lease.ended_at) == ("RELEASED", START + timedelta(minutes=2))
    operation = CouponOperation.objects.get(coupon=coupon, op_type="VOID")
    assert (operation.from_state, operation.order_id, operation.lock_id) == (
        "LOCKED", "order-A", result.lock.pk,
    )


def test_lease_holder_cannot_redeem_after_void(coupon, ctx):
    _, proof = lock(coupon, ctx)
    void(coupon, ctx, 2)

    with refused("INVALID_STATE", op_type="REDEEM", coupon_id=coupon.pk):
        coupon_redeem(coupon_id=coupon.pk, lease=replace(proof, expected_version=3),
                      payment_id="P1", ctx=ctx)


def test_void_of_a_used_coupon_keeps_its_redemption(coupon, ctx):
    _, proof = lock(coupon, ctx)
    redemption = coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P1",
                               ctx=ctx).redemption

    void(coupon, ctx, 3, reason="refund decision")

    assert ledger(coupon)[-1] == ("VOID", "USED", "VOID", 3, 4)
    assert Redemption.objects.get(pk=redemption.pk).succeeded


def test_a_long_reason_is_kept_to_500_characters(coupon, ctx):
    void(coupon, ctx, 1, reason="y" * 501)

    assert CouponOperation.objects.get(op_type="VOID").reason == "y" * 500


# --- refusals -----------------------------------------------------------------------------


def test_void_of_an_unknown_coupon_is_not_found(clock, ctx):
    with refused("NOT_FOUND", op_type="VOID", coupon_id=4040):
        coupon_void(coupon_id=4040, expected_version=1, reason="x", ctx=ctx)


def test_second_void_is_invalid_state(coupon, ctx):
    void(coupon, ctx, 1)

    with refused("INVALID_STATE", op_type="VOID", coupon_id=coupon.pk) as error:
        void(coupon, ctx, 2)

    assert error.value.details == {
        "current_state": "VOID", "current_version": 2, "operation": "VOID",
    }


def test_expired_coupon_cannot_be_voided(coupon, ctx, clock):
    clock.advance(days=31)
    coupon_expire(coupon_id=coupon.pk, expected_version=1, ctx=ctx)

    with refused("INVALID_STATE", op_type="VOID", coupon_id=coupon.pk) as error:
        void(coupon, ctx, 2)

    assert error.value.details["current_state"] == "EXPIRED"


def test_state_is_checked_before_version(coupon, ctx):
    void(coupon, ctx, 1)

    with refused("INVALID_STATE", op_type="VOID", coupon_id=coupon.pk):
        void(coupon, ctx, 99)


def test_void_with_a_stale_version_is_version_conflict(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)

    with refused("VERSION_CONFLICT", op_type="VOID", coupon_id=coupon.pk) as error:
        void(coupon, ctx, 2)

    assert error.value.details == {
        "current_state": "AVAILABLE", "current_version": 3, "expected_version": 2,
    }


def test_void_with_a_version_from_before_the_lock_leaves_the_lease_alone(coupon, ctx):
    result, _ = lock(coupon, ctx)

    with refused("VERSION_CONFLICT", op_type="VOID", coupon_id=coupon.pk):
        void(coupon, ctx, 1)

    assert CouponLock.objects.get(pk=result.lock.pk).status == "ACTIVE"

from dataclasses import replace
from datetime import timedelta

import pytest

from coupons.models import CommandRejection, CouponLock, CouponOperation, OutboxEvent
from coupons.services import (
    LeaseProof,
    coupon_redeem,
    coupon_release,
    coupon_renew,
    coupon_void,
)
from tests.command_checks import events, lease_taken_over, ledger, refused
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db


def release(coupon, proof, ctx, reason="order closed"):
    return coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx, reason=reason)


# --- happy path ---------------------------------------------------------------------------


def test_release_makes_the_coupon_available_again_and_ends_the_lease(coupon, ctx, clock):
    result, proof = lock(coupon, ctx)
    clock.advance(minutes=3)

    released = release(coupon, proof, ctx)

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("AVAILABLE", 3)
    assert (coupon.current_lock_id, coupon.locked_order_id, coupon.lock_token_hash,
            coupon.lock_expires_at) == (None, None, None, None)
    lease = CouponLock.objects.get(pk=result.lock.pk)
    assert (lease.status, lease.ended_at) == ("RELEASED", START + timedelta(minutes=3))
    assert released.payload() == {"coupon_id": coupon.pk, "state_version": 3,
                                  "status": "AVAILABLE"}


def test_release_appends_one_ledger_row_with_the_reason_and_an_event(coupon, ctx):
    result, proof = lock(coupon, ctx)
    release(coupon, proof, ctx, reason="payment failed")

    assert ledger(coupon)[-1] == ("RELEASE", "LOCKED", "AVAILABLE", 2, 3)
    operation = CouponOperation.objects.get(coupon=coupon, op_type="RELEASE")
    assert (operation.order_id, operation.lock_id, operation.reason) == (
        "order-A", result.lock.pk, "payment failed",
    )
    assert events(coupon) == ["CouponIssued", "CouponLocked", "CouponReleased"]
    assert OutboxEvent.objects.get(operation=operation).payload["to_state"] == "AVAILABLE"


@pytest.mark.parametrize("days_later", [30, 45])
def test_release_at_or_after_valid_until_expires_the_coupon(coupon, ctx, clock, days_later):
    _, proof = lock(coupon, ctx, lease_until=START + timedelta(days=60))
    clock.advance(days=days_later)

    assert release(coupon, proof, ctx).status == "EXPIRED"

    assert ledger(coupon)[-1] == ("RELEASE", "LOCKED", "EXPIRED", 2, 3)
    coupon.refresh_from_db()
    assert coupon.current_lock_id is None


def test_release_just_before_valid_until_gives_the_coupon_back(coupon, ctx, clock):
    _, proof = lock(coupon, ctx, lease_until=START + timedelta(days=60))
    clock.advance(days=30, seconds=-1)

    assert release(coupon, proof, ctx).status == "AVAILABLE"


def test_scanner_releases_a_lapsed_lease_with_the_lock_and_stored_hash(coupon, ctx, clock):
    result, _ = lock(coupon, ctx, lease_seconds=60)
    clock.advance(minutes=5)

    proof = LeaseProof.from_lock(result.lock, expected_version=2)
    assert release(coupon, proof, ctx, reason="lease expired").status == "AVAILABLE"


def test_a_long_reason_is_kept_to_500_characters(coupon, ctx):
    _, proof = lock(coupon, ctx)
    release(coupon, proof, ctx, reason="x" * 600)

    assert CouponOperation.objects.get(op_type="RELEASE").reason == "x" * 500


def test_release_after_renew_needs_the_renewed_version(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_renew(coupon_id=coupon.pk, lease=proof, ctx=ctx)

    assert release(coupon, replace(proof, expected_version=3), ctx).state_version == 4


# --- refusals -----------------------------------------------------------------------------


def test_release_of_an_unknown_coupon_is_not_found(coupon, ctx):
    _, proof = lock(coupon, ctx)

    with refused("NOT_FOUND", op_type="RELEASE", coupon_id=55555):
        coupon_release(coupon_id=55555, lease=proof, ctx=ctx)


def test_second_release_of_the_same_lease_is_invalid_state(coupon, ctx):
    _, proof = lock(coupon, ctx)
    release(coupon, proof, ctx)

    with refused("INVALID_STATE", op_type="RELEASE", coupon_id=coupon.pk) as error:
        release(coupon, replace(proof, expected_version=3), ctx)

    assert error.value.details == {
        "current_state": "AVAILABLE", "current_version": 3, "operation": "RELEASE",
    }


def test_release_after_redeem_is_invalid_state(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P1", ctx=ctx)

    with refused("INVALID_STATE", op_type="RELEASE", coupon_id=coupon.pk) as error:
        release(coupon, replace(proof, expected_version=3), ctx)

    assert error.value.details["current_state"] == "USED"


def test_release_after_void_is_invalid_state(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_void(coupon_id=coupon.pk, expected_version=2, reason="campaign closed", ctx=ctx)

    with refused("INVALID_STATE", op_type="RELEASE", coupon_id=coupon.pk) as error:
        release(coupon, replace(proof, expected_version=3), ctx)

    assert error.value.details["current_state"] == "VOID"


@pytest.mark.parametrize("names_order", ["order-A", "order-B"])
def test_late_release_with_a_stale_token_never_frees_the_new_lease(coupon, ctx, names_order):
    stale, _ = lease_taken_over(coupon, ctx)

    with refused("TOKEN_MISMATCH", op_type="RELEASE", coupon_id=coupon.pk) as error:
        release(coupon, replace(stale, order_id=names_order, expected_version=4), ctx)

    assert error.value.details == {"current_state": "LOCKED", "current_version": 4}


def test_release_with_a_guessed_token_is_token_mismatch(coupon, ctx):
    lock(coupon, ctx)
    forged = LeaseProof.from_token(order_id="order-A", lock_token="guess", expected_version=2)

    with refused("TOKEN_MISMATCH", op_type="RELEASE", coupon_id=coupon.pk):
        release(coupon, forged, ctx)


def test_right_token_for_another_order_is_order_mismatch(coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="order-A")

    with refused("ORDER_MISMATCH", op_type="RELEASE", coupon_id=coupon.pk) as error:
        release(coupon, replace(proof, order_id="order-B"), ctx)

    assert error.value.details == {"current_state": "LOCKED", "current_version": 2}


def test_release_with_an_old_version_is_version_conflict(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_renew(coupon_id=coupon.pk, lease=proof, ctx=ctx)

    with refused("VERSION_CONFLICT", op_type="RELEASE", coupon_id=coupon.pk) as error:
        release(coupon, proof, ctx)

    assert error.value.details == {
        "current_state": "LOCKED", "current_version": 3, "expected_version": 2,
    }


def test_release_refusal_is_logged_with_the_order_it_named(coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="order-A")

    with refused("ORDER_MISMATCH", op_type="RELEASE", coupon_id=coupon.pk):
        release(coupon, replace(proof, order_id="order-Q"), ctx)

    assert CommandRejection.objects.get().order_id == "order-Q"

from dataclasses import replace
from datetime import timedelta

import pytest

from coupons.models import CouponLock, CouponOperation, OutboxEvent
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


def renew(coupon, proof, ctx, **window):
    return coupon_renew(coupon_id=coupon.pk, lease=proof, ctx=ctx, **window)


# --- happy path ---------------------------------------------------------------------------


def test_renew_extends_the_lease_and_raises_the_version_by_one(coupon, ctx, clock):
    result, proof = lock(coupon, ctx)
    clock.advance(minutes=10)

    renewed = renew(coupon, proof, ctx, lease_seconds=600)

    new_end = START + timedelta(minutes=20)
    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("LOCKED", 3)
    assert coupon.lock_expires_at == new_end
    assert coupon.current_lock_id == result.lock.pk
    assert CouponLock.objects.get(pk=result.lock.pk).expires_at == new_end
    assert CouponLock.objects.get(pk=result.lock.pk).status == "ACTIVE"
    assert (renewed.state_version, renewed.expires_at) == (3, new_end)


def test_renew_appends_one_ledger_row_and_a_lease_renewed_event(coupon, ctx, clock):
    result, proof = lock(coupon, ctx)
    renew(coupon, proof, ctx, lease_seconds=1800)

    assert ledger(coupon)[-1] == ("RENEW", "LOCKED", "LOCKED", 2, 3)
    operation = CouponOperation.objects.get(coupon=coupon, op_type="RENEW")
    assert (operation.order_id, operation.lock_id) == ("order-A", result.lock.pk)
    assert operation.reason == "lease 2026-06-01T12:15:00Z → 2026-06-01T12:30:00Z"
    assert events(coupon)[-1] == "CouponLeaseRenewed"
    assert OutboxEvent.objects.get(operation=operation).payload["state_version"] == 3


def test_renew_without_a_window_gives_the_default_lease_from_now(coupon, ctx, clock):
    _, proof = lock(coupon, ctx, lease_seconds=60)
    clock.advance(seconds=30)

    assert renew(coupon, proof, ctx).expires_at == START + timedelta(seconds=30 + 900)


def test_renew_honours_lease_until(coupon, ctx):
    _, proof = lock(coupon, ctx)
    deadline = START + timedelta(days=7)

    assert renew(coupon, proof, ctx, lease_until=deadline).expires_at == deadline


def test_renewed_lease_keeps_its_token_at_the_new_version(coupon, ctx):
    _, proof = lock(coupon, ctx)
    renewed = renew(coupon, proof, ctx)

    proof = replace(proof, expected_version=renewed.state_version)
    renew(coupon, proof, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=replace(proof, expected_version=4),
                  payment_id="P1", ctx=ctx)
    assert [row[0] for row in ledger(coupon)] == ["ISSUE", "LOCK", "RENEW", "RENEW", "REDEEM"]


def test_a_lease_past_its_end_but_not_released_can_still_be_renewed(coupon, ctx, clock):
    _, proof = lock(coupon, ctx, lease_seconds=60)
    clock.advance(hours=2)

    assert renew(coupon, proof, ctx, lease_seconds=60).expires_at == clock.now() + timedelta(
        seconds=60
    )


def test_renew_payload_carries_iso_time_and_locked_status(coupon, ctx):
    _, proof = lock(coupon, ctx)

    assert renew(coupon, proof, ctx, lease_seconds=60).payload() == {
        "coupon_id": coupon.pk, "state_version": 3, "expires_at": "2026-06-01T12:01:00Z",
        "status": "LOCKED",
    }


def test_internal_caller_can_renew_with_the_lock_and_stored_hash(coupon, ctx):
    result, _ = lock(coupon, ctx)

    proof = LeaseProof.from_lock(result.lock, expected_version=2)
    assert renew(coupon, proof, ctx).state_version == 3


# --- refusals -----------------------------------------------------------------------------


def test_renew_of_an_unknown_coupon_is_not_found(coupon, ctx):
    _, proof = lock(coupon, ctx)

    with refused("NOT_FOUND", op_type="RENEW", coupon_id=999999):
        coupon_renew(coupon_id=999999, lease=proof, ctx=ctx)


def test_renew_of_a_coupon_never_locked_is_invalid_state(coupon, ctx):
    proof = LeaseProof.from_token(order_id="order-A", lock_token="guess", expected_version=1)

    with refused("INVALID_STATE", op_type="RENEW", coupon_id=coupon.pk) as error:
        renew(coupon, proof, ctx)

    assert error.value.details == {
        "current_state": "AVAILABLE", "current_version": 1, "operation": "RENEW",
    }


def test_late_renew_after_release_is_refused(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)

    with refused("INVALID_STATE", op_type="RENEW", coupon_id=coupon.pk) as error:
        renew(coupon, replace(proof, expected_version=3), ctx)

    assert error.value.details["current_state"] == "AVAILABLE"


@pytest.mark.parametrize("end", ["redeem", "void"])
def test_renew_after_the_lease_ended_is_invalid_state(coupon, ctx, end):
    _, proof = lock(coupon, ctx)
    if end == "redeem":
        coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P1", ctx=ctx)
    else:
        coupon_void(coupon_id=coupon.pk, expected_version=2, reason="risk", ctx=ctx)

    with refused("INVALID_STATE", op_type="RENEW", coupon_id=coupon.pk) as error:
        renew(coupon, replace(proof, expected_version=3), ctx)

    assert error.value.details["current_state"] == {"redeem": "USED", "void": "VOID"}[end]


def test_renew_with_a_wrong_token_is_token_mismatch(coupon, ctx):
    _, proof = lock(coupon, ctx)
    forged = LeaseProof.from_token(order_id="order-A", lock_token="not-the-token",
                                   expected_version=2)

    with refused("TOKEN_MISMATCH", op_type="RENEW", coupon_id=coupon.pk) as error:
        renew(coupon, forged, ctx)

    assert error.value.details == {"current_state": "LOCKED", "current_version": 2}


@pytest.mark.parametrize("names_order", ["order-A", "order-B"])
def test_stale_token_cannot_renew_a_newer_lease_whatever_order_it_names(coupon, ctx,
                                                                         names_order):
    stale, current = lease_taken_over(coupon, ctx)
    proof = replace(stale, order_id=names_order, expected_version=current.expected_version)

    with refused("TOKEN_MISMATCH", op_type="RENEW", coupon_id=coupon.pk) as error:
        renew(coupon, proof, ctx)

    assert error.value.details == {"current_state": "LOCKED", "current_version": 4}


def test_internal_caller_with_an_old_lock_cannot_renew_the_new_lease(coupon, ctx):
    first, proof_a = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof_a, ctx=ctx)
    lock(coupon, ctx, order_id="order-B")

    with refused("TOKEN_MISMATCH", op_type="RENEW", coupon_id=coupon.pk):
        renew(coupon, LeaseProof.from_lock(first.lock, expected_version=4), ctx)


def test_right_token_for_another_order_is_order_mismatch(coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="order-A")

    with refused("ORDER_MISMATCH", op_type="RENEW", coupon_id=coupon.pk) as error:
        renew(coupon, replace(proof, order_id="order-B"), ctx)

    assert error.value.details == {"current_state": "LOCKED", "current_version": 2}


def test_order_is_checked_before_version(coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="order-A")

    with refused("ORDER_MISMATCH", op_type="RENEW", coupon_id=coupon.pk):
        renew(coupon, replace(proof, order_id="order-B", expected_version=7), ctx)


def test_token_is_checked_before_order_and_version(coupon, ctx):
    lock(coupon, ctx, order_id="order-A")
    forged = LeaseProof.from_token(order_id="order-B", lock_token="x", expected_version=9)

    with refused("TOKEN_MISMATCH", op_type="RENEW", coupon_id=coupon.pk):
        renew(coupon, forged, ctx)


def test_renew_with_an_old_version_is_version_conflict(coupon, ctx):
    _, proof = lock(coupon, ctx)
    renew(coupon, proof, ctx)

    with refused("VERSION_CONFLICT", op_type="RENEW", coupon_id=coupon.pk) as error:
        renew(coupon, proof, ctx)

    assert error.value.details == {
        "current_state": "LOCKED", "current_version": 3, "expected_version": 2,
    }


@pytest.mark.parametrize(
    "window",
    [
        pytest.param({"lease_seconds": 60, "lease_until": START + timedelta(hours=1)}, id="both"),
        pytest.param({"lease_until": START - timedelta(minutes=1)}, id="past"),
        pytest.param({"lease_until": START + timedelta(days=91)}, id="too-long"),
    ],
)
def test_renew_to_an_impossible_lease_end_is_a_validation_error(coupon, ctx, window):
    _, proof = lock(coupon, ctx)

    with refused("VALIDATION_ERROR", op_type="RENEW", coupon_id=coupon.pk):
        renew(coupon, proof, ctx, **window)


def test_ownership_is_checked_before_the_lease_window(coupon, ctx):
    lock(coupon, ctx)
    forged = LeaseProof.from_token(order_id="order-A", lock_token="x", expected_version=2)

    with refused("TOKEN_MISMATCH", op_type="RENEW", coupon_id=coupon.pk):
        renew(coupon, forged, ctx, lease_until=START - timedelta(days=1))

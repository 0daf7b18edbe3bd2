from datetime import timedelta

import pytest

from coupons.models import CouponOperation, OutboxEvent
from coupons.services import coupon_expire, coupon_redeem, coupon_release, coupon_void
from tests.command_checks import events, ledger, refused
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db

VALID_UNTIL = START + timedelta(days=30)  # the `template` fixture's 30-day validity


def expire(coupon, ctx, expected_version=1):
    return coupon_expire(coupon_id=coupon.pk, expected_version=expected_version, ctx=ctx)


# --- happy path ---------------------------------------------------------------------------


def test_available_coupon_past_valid_until_expires(coupon, ctx, clock):
    clock.advance(days=31)

    result = expire(coupon, ctx)

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("EXPIRED", 2)
    assert result.payload() == {"coupon_id": coupon.pk, "state_version": 2, "status": "EXPIRED"}


def test_expire_appends_one_ledger_row_with_the_reason_and_an_event(coupon, ctx, clock):
    clock.advance(days=31)
    expire(coupon, ctx)

    assert ledger(coupon) == [
        ("ISSUE", "", "AVAILABLE", 0, 1), ("EXPIRE", "AVAILABLE", "EXPIRED", 1, 2),
    ]
    operation = CouponOperation.objects.get(coupon=coupon, op_type="EXPIRE")
    assert operation.reason == "past valid_until 2026-07-01T12:00:00Z"
    assert operation.created_at == START + timedelta(days=31)
    assert events(coupon) == ["CouponIssued", "CouponExpired"]
    assert OutboxEvent.objects.get(operation=operation).payload["to_state"] == "EXPIRED"


def test_coupon_expires_at_exactly_valid_until(coupon, ctx, clock):
    clock.set(VALID_UNTIL)

    assert expire(coupon, ctx).status == "EXPIRED"


def test_coupon_given_back_after_a_lock_expires_at_its_current_version(coupon, ctx, clock):
    _, proof = lock(coupon, ctx)
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
    clock.advance(days=31)

    assert expire(coupon, ctx, expected_version=3).state_version == 4


# --- refusals -----------------------------------------------------------------------------


def test_expire_of_an_unknown_coupon_is_not_found(clock, ctx):
    with refused("NOT_FOUND", op_type="EXPIRE", coupon_id=8080):
        coupon_expire(coupon_id=8080, expected_version=1, ctx=ctx)


def test_expire_of_a_coupon_still_valid_is_invalid_state(coupon, ctx, clock):
    clock.set(VALID_UNTIL - timedelta(seconds=1))

    with refused("INVALID_STATE", op_type="EXPIRE", coupon_id=coupon.pk) as error:
        expire(coupon, ctx)

    assert error.value.details == {
        "current_state": "AVAILABLE", "current_version": 1,
        "valid_until": "2026-07-01T12:00:00Z",
    }
    assert error.value.message == "The coupon is still valid."


def test_locked_coupon_is_not_expired_even_past_valid_until(coupon, ctx, clock):
    lock(coupon, ctx, lease_until=START + timedelta(days=60))
    clock.advance(days=31)

    with refused("INVALID_STATE", op_type="EXPIRE", coupon_id=coupon.pk) as error:
        expire(coupon, ctx, expected_version=2)

    assert error.value.details == {
        "current_state": "LOCKED", "current_version": 2, "operation": "EXPIRE",
    }


def test_used_coupon_is_not_expired(coupon, ctx, clock):
    _, proof = lock(coupon, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P1", ctx=ctx)
    clock.advance(days=31)

    with refused("INVALID_STATE", op_type="EXPIRE", coupon_id=coupon.pk) as error:
        expire(coupon, ctx, expected_version=3)

    assert error.value.details["current_state"] == "USED"


def test_voided_coupon_is_not_expired(coupon, ctx, clock):
    coupon_void(coupon_id=coupon.pk, expected_version=1, reason="risk", ctx=ctx)
    clock.advance(days=31)

    with refused("INVALID_STATE", op_type="EXPIRE", coupon_id=coupon.pk):
        expire(coupon, ctx, expected_version=2)


def test_second_expire_is_invalid_state(coupon, ctx, clock):
    clock.advance(days=31)
    expire(coupon, ctx)

    with refused("INVALID_STATE", op_type="EXPIRE", coupon_id=coupon.pk) as error:
        expire(coupon, ctx, expected_version=2)

    assert error.value.details["current_state"] == "EXPIRED"


def test_scanner_with_a_stale_version_is_version_conflict(coupon, ctx, clock):
    _, proof = lock(coupon, ctx)
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
    clock.advance(days=31)

    with refused("VERSION_CONFLICT", op_type="EXPIRE", coupon_id=coupon.pk) as error:
        expire(coupon, ctx, expected_version=1)

    assert error.value.details == {
        "current_state": "AVAILABLE", "current_version": 3, "expected_version": 1,
    }


def test_version_is_checked_before_validity(coupon, ctx):
    with refused("VERSION_CONFLICT", op_type="EXPIRE", coupon_id=coupon.pk):
        expire(coupon, ctx, expected_version=7)

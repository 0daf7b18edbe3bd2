from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest

from coupons.errors import CouponExpired
from coupons.models import CommandRejection, CouponLock, CouponOperation, OutboxEvent, Redemption
from coupons.services import (
    CommandContext,
    LeaseProof,
    coupon_issue,
    coupon_redeem,
    coupon_release,
    coupon_renew,
    coupon_void,
    template_create,
)
from coupons.write.tokens import lease_token
from tests.command_checks import events, lease_taken_over, ledger, refused, world
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db


def redeem(coupon, proof, ctx, payment_id="P1"):
    return coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id=payment_id, ctx=ctx)


# --- happy path ---------------------------------------------------------------------------


def test_redeem_uses_the_coupon_and_ends_the_lease(coupon, ctx, clock):
    result, proof = lock(coupon, ctx)
    clock.advance(minutes=5)

    redeemed = redeem(coupon, proof, ctx)

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("USED", 3)
    assert coupon.current_lock_id is None
    assert (coupon.locked_order_id, coupon.lock_token_hash, coupon.lock_expires_at) == (
        None, None, None,
    )
    lease = CouponLock.objects.get(pk=result.lock.pk)
    assert (lease.status, lease.ended_at) == ("CONSUMED", START + timedelta(minutes=5))
    assert redeemed.state_version == 3
    assert not redeemed.already_redeemed


def test_redeem_records_the_redemption_with_the_frozen_discount(coupon, ctx):
    result, proof = lock(coupon, ctx, amount="250.00")

    redemption = redeem(coupon, proof, ctx, payment_id="PAY-9").redemption

    assert Redemption.objects.get() == redemption
    assert (redemption.order_id, redemption.payment_id, redemption.lock_id) == (
        "order-A", "PAY-9", result.lock.pk,
    )
    assert redemption.discount_amount == Decimal("30.00")
    assert redemption.succeeded


def test_redeem_appends_one_ledger_row_and_a_coupon_redeemed_event(coupon, ctx):
    result, proof = lock(coupon, ctx)
    redeem(coupon, proof, ctx, payment_id="PAY-9")

    assert ledger(coupon) == [
        ("ISSUE", "", "AVAILABLE", 0, 1),
        ("LOCK", "AVAILABLE", "LOCKED", 1, 2),
        ("REDEEM", "LOCKED", "USED", 2, 3),
    ]
    operation = CouponOperation.objects.get(coupon=coupon, op_type="REDEEM")
    assert (operation.order_id, operation.lock_id, operation.payment_id) == (
        "order-A", result.lock.pk, "PAY-9",
    )
    assert events(coupon) == ["CouponIssued", "CouponLocked", "CouponRedeemed"]
    assert OutboxEvent.objects.get(operation=operation).payload["payment_id"] == "PAY-9"


def test_redeem_payload_has_decimal_strings(coupon, ctx):
    _, proof = lock(coupon, ctx)
    redeemed = redeem(coupon, proof, ctx)

    assert redeemed.payload() == {
        "coupon_id": coupon.pk, "redemption_id": redeemed.redemption.pk, "order_id": "order-A",
        "payment_id": "P1", "discount_amount": "30.00", "state_version": 3, "status": "USED",
        "already_redeemed": False,
    }


def test_redeem_after_the_lease_ended_but_before_release_succeeds(coupon, ctx, clock):
    _, proof = lock(coupon, ctx, lease_seconds=60)
    clock.advance(hours=3)

    assert redeem(coupon, proof, ctx).state_version == 3


def test_lock_honours_validity_so_redeem_after_valid_until_succeeds(coupon, ctx, clock):
    _, proof = lock(coupon, ctx, lease_until=START + timedelta(days=45))
    clock.advance(days=40)  # past valid_until: the presale final payment comes late

    assert redeem(coupon, proof, ctx).state_version == 3
    coupon.refresh_from_db()
    assert coupon.status == "USED"


def test_redeem_after_renew_uses_the_renewed_version(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_renew(coupon_id=coupon.pk, lease=proof, ctx=ctx)

    assert redeem(coupon, replace(proof, expected_version=3), ctx).state_version == 4


def test_internal_caller_can_redeem_with_the_lock_and_stored_hash(coupon, ctx):
    result, _ = lock(coupon, ctx)

    redeemed = redeem(coupon, LeaseProof.from_lock(result.lock, expected_version=2), ctx)
    assert redeemed.state_version == 3


def test_new_owner_redeems_after_a_stale_owner_was_refused(coupon, ctx):
    stale, current = lease_taken_over(coupon, ctx)
    with refused("TOKEN_MISMATCH", op_type="REDEEM", coupon_id=coupon.pk):
        redeem(coupon, stale, ctx, payment_id="PAY-A")

    redeemed = redeem(coupon, current, ctx, payment_id="PAY-B")

    assert redeemed.redemption.order_id == "order-B"
    assert [row[0] for row in ledger(coupon)] == ["ISSUE", "LOCK", "RELEASE", "LOCK", "REDEEM"]


# --- the same order asking again ----------------------------------------------------------


def test_repeated_redeem_by_the_same_order_answers_the_existing_redemption(coupon, ctx):
    _, proof = lock(coupon, ctx)
    first = redeem(coupon, proof, ctx, payment_id="P1")
    before = world()

    again = redeem(coupon, proof, ctx, payment_id="P1")

    assert again.already_redeemed
    assert again.redemption.pk == first.redemption.pk
    assert again.payload() == {**first.payload(), "already_redeemed": True}
    assert world() == before


@pytest.mark.parametrize(("wrong", "code"), [
    ({"token": "whatever"}, "TOKEN_MISMATCH"),
    ({"expected_version": 1}, "VERSION_CONFLICT"),
    ({"expected_version": 3}, "VERSION_CONFLICT"),
    ({"payment_id": "P2"}, "INVALID_STATE"),
    ({"token": "whatever", "expected_version": 1, "payment_id": "P2"}, "TOKEN_MISMATCH"),
], ids=["token", "old_version", "current_version", "payment", "everything"])
def test_repeated_redeem_must_prove_the_lease_it_consumed(coupon, ctx, wrong, code):
    """The issue's reproduction: the order that redeemed asked again with a wrong token,
    version and payment id and got the stored redemption back. Now it is a stale caller."""
    _, proof = lock(coupon, ctx)
    redeem(coupon, proof, ctx, payment_id="P1")
    asked = LeaseProof.from_token(
        order_id="order-A", lock_token=wrong.get("token", lease_token_of(coupon)),
        expected_version=wrong.get("expected_version", proof.expected_version),
    )

    with refused(code, op_type="REDEEM", coupon_id=coupon.pk) as error:
        redeem(coupon, asked, ctx, payment_id=wrong.get("payment_id", "P1"))

    assert (error.value.details["current_state"], error.value.details["current_version"]) == (
        "USED", 3,
    )
    assert "P1" not in str(error.value.as_body())
    assert Redemption.objects.count() == 1


def test_repeated_redeem_by_an_internal_caller_proves_the_consumed_lock(coupon, ctx):
    result, proof = lock(coupon, ctx)
    first = redeem(coupon, proof, ctx)
    other, _ = lock(coupon_issue(template_id=coupon.template_id, user_id="u1", ctx=ctx).coupon,
                    ctx)

    again = redeem(coupon, LeaseProof.from_lock(result.lock, expected_version=2), ctx)
    assert (again.already_redeemed, again.redemption.pk) == (True, first.redemption.pk)
    with refused("TOKEN_MISMATCH", op_type="REDEEM", coupon_id=coupon.pk):
        redeem(coupon, replace(LeaseProof.from_lock(result.lock, expected_version=2),
                               lock_id=other.lock.pk), ctx)


def lease_token_of(coupon) -> str:
    return lease_token(CouponLock.objects.get(coupon=coupon).pk)


# --- refusals -----------------------------------------------------------------------------


def test_redeem_of_an_unknown_coupon_is_not_found(coupon, ctx):
    _, proof = lock(coupon, ctx)

    with refused("NOT_FOUND", op_type="REDEEM", coupon_id=31337) as error:
        coupon_redeem(coupon_id=31337, lease=proof, payment_id="P1", ctx=ctx)

    assert error.value.http_status == 404


def test_redeem_by_another_order_of_a_used_coupon_is_invalid_state(coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="order-A")
    redeem(coupon, proof, ctx)

    with refused("INVALID_STATE", op_type="REDEEM", coupon_id=coupon.pk) as error:
        redeem(coupon, replace(proof, order_id="order-B"), ctx, payment_id="P2")

    assert error.value.details == {
        "current_state": "USED", "current_version": 3, "operation": "REDEEM",
    }


def test_late_redeem_after_release_is_refused(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx, reason="payment failed")

    with refused("INVALID_STATE", op_type="REDEEM", coupon_id=coupon.pk) as error:
        redeem(coupon, proof, ctx)

    assert error.value.details["current_state"] == "AVAILABLE"
    assert not Redemption.objects.exists()


def test_redeem_of_a_voided_coupon_is_invalid_state(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_void(coupon_id=coupon.pk, expected_version=2, reason="risk", ctx=ctx)

    with refused("INVALID_STATE", op_type="REDEEM", coupon_id=coupon.pk) as error:
        redeem(coupon, proof, ctx)

    assert error.value.details["current_state"] == "VOID"


def test_redeem_of_a_coupon_released_to_expired_is_invalid_state(coupon, ctx, clock):
    _, proof = lock(coupon, ctx, lease_until=START + timedelta(days=45))
    clock.advance(days=31)
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)

    with refused("INVALID_STATE", op_type="REDEEM", coupon_id=coupon.pk) as error:
        redeem(coupon, replace(proof, expected_version=3), ctx)

    assert error.value.details["current_state"] == "EXPIRED"


@pytest.mark.parametrize("names_order", ["order-A", "order-B"])
def test_late_redeem_with_a_stale_token_never_touches_the_new_lease(coupon, ctx, names_order):
    stale, current = lease_taken_over(coupon, ctx)

    with refused("TOKEN_MISMATCH", op_type="REDEEM", coupon_id=coupon.pk) as error:
        redeem(coupon, replace(stale, order_id=names_order, expected_version=4), ctx)

    assert error.value.details == {"current_state": "LOCKED", "current_version": 4}
    coupon.refresh_from_db()
    assert coupon.locked_order_id == "order-B"


def test_redeem_with_a_guessed_token_is_token_mismatch(coupon, ctx):
    lock(coupon, ctx)
    forged = LeaseProof.from_token(order_id="order-A", lock_token="guess", expected_version=2)

    with refused("TOKEN_MISMATCH", op_type="REDEEM", coupon_id=coupon.pk):
        redeem(coupon, forged, ctx)


def test_internal_caller_with_an_old_lock_cannot_redeem_the_new_lease(coupon, ctx):
    first, proof_a = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof_a, ctx=ctx)
    lock(coupon, ctx, order_id="order-B")

    with refused("TOKEN_MISMATCH", op_type="REDEEM", coupon_id=coupon.pk):
        redeem(coupon, LeaseProof.from_lock(first.lock, expected_version=4), ctx)


def test_right_token_for_another_order_is_order_mismatch(coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="order-A")

    with refused("ORDER_MISMATCH", op_type="REDEEM", coupon_id=coupon.pk) as error:
        redeem(coupon, replace(proof, order_id="order-X"), ctx)

    assert error.value.details == {"current_state": "LOCKED", "current_version": 2}


def test_redeem_with_an_old_version_is_version_conflict(coupon, ctx):
    _, proof = lock(coupon, ctx)
    coupon_renew(coupon_id=coupon.pk, lease=proof, ctx=ctx)

    with refused("VERSION_CONFLICT", op_type="REDEEM", coupon_id=coupon.pk) as error:
        redeem(coupon, proof, ctx)

    assert error.value.details == {
        "current_state": "LOCKED", "current_version": 3, "expected_version": 2,
    }


def test_refused_redeem_is_logged_for_support_without_the_token(coupon, ctx):
    result, proof = lock(coupon, ctx)
    support_ctx = CommandContext(actor="client:payments", idempotency_key="pay-1")

    with refused("VERSION_CONFLICT", op_type="REDEEM", coupon_id=coupon.pk):
        redeem(coupon, replace(proof, expected_version=5), support_ctx)

    rejection = CommandRejection.objects.get()
    assert (rejection.order_id, rejection.actor, rejection.idempotency_key) == (
        "order-A", "client:payments", "pay-1",
    )
    logged = str(rejection.details) + rejection.message
    assert result.lock_token not in logged
    assert result.lock.token_hash not in logged


# --- templates that re-check validity at redeem (docs/design.md) ---------------------------------


def strict_coupon(ctx, strategy):
    template = template_create(code=strategy.lower(), name=strategy, kind="AMOUNT_OFF",
                               face_value=Decimal("30.00"), valid_days=30,
                               expiry_during_lock=strategy)
    return coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon


@pytest.mark.parametrize("strategy", ["STRICT", "SUBSTITUTE"])
def test_redeem_before_valid_until_succeeds_under_a_strict_template(ctx, clock, strategy):
    coupon = strict_coupon(ctx, strategy)
    _, proof = lock(coupon, ctx, lease_until=START + timedelta(days=45))
    clock.advance(days=30, seconds=-1)

    assert redeem(coupon, proof, ctx).state_version == 3


@pytest.mark.parametrize("strategy", ["STRICT", "SUBSTITUTE"])
def test_late_redeem_under_a_strict_template_is_refused_and_releases_to_expired(ctx, clock,
                                                                                strategy):
    coupon = strict_coupon(ctx, strategy)
    result, proof = lock(coupon, ctx, lease_until=START + timedelta(days=45))
    clock.advance(days=31)

    with pytest.raises(CouponExpired) as error:
        redeem(coupon, proof, ctx)

    assert error.value.http_status == 422
    assert error.value.details == {
        "valid_until": "2026-07-01T12:00:00Z", "current_state": "EXPIRED", "current_version": 3,
    }
    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version, coupon.current_lock_id) == ("EXPIRED", 3, None)
    assert ledger(coupon)[-1] == ("RELEASE", "LOCKED", "EXPIRED", 2, 3)
    release_row = CouponOperation.objects.get(coupon=coupon, op_type="RELEASE")
    assert release_row.reason == f"expired before redeem ({strategy})"
    assert release_row.lock_id == result.lock.pk
    assert events(coupon)[-1] == "CouponReleased"
    assert CouponLock.objects.get(pk=result.lock.pk).status == "RELEASED"
    assert not Redemption.objects.exists()
    rejection = CommandRejection.objects.get()
    assert (rejection.op_type, rejection.error_code) == ("REDEEM", "COUPON_EXPIRED")


def test_stale_owner_of_a_strict_coupon_cannot_release_it_by_redeeming_late(ctx, clock):
    coupon = strict_coupon(ctx, "STRICT")
    _, proof = lock(coupon, ctx, lease_until=START + timedelta(days=45))
    clock.advance(days=31)

    with refused("ORDER_MISMATCH", op_type="REDEEM", coupon_id=coupon.pk):
        redeem(coupon, replace(proof, order_id="order-Z"), ctx)

    coupon.refresh_from_db()
    assert coupon.status == "LOCKED"

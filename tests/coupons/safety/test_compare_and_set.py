"""The compare-and-set in apply_transition is the last line of defence: shown firing here.

Every command checks the version under the row lock before it gets there, so in ordinary use
the CAS never loses. These tests reach it with a stale caller directly, and through a command
whose row lock is taken away, and expect a VERSION_CONFLICT that changed nothing, never an
IntegrityError from the ledger (a 500).
"""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction

from coupons import clock
from coupons.errors import InvalidState, VersionConflict
from coupons.models import (
    CouponLock,
    CouponStatus,
    LockStatus,
    OperationType,
    OrderCoupon,
    UserCoupon,
)
from coupons.services import coupon_release, coupon_renew, coupon_void
from coupons.write.rows import lock_coupon_row
from coupons.write.transitions import UNBOUND, Command, apply_transition, guard, is_allowed
from tests.command_checks import refused, world
from tests.conftest import lock

pytestmark = pytest.mark.django_db


def relocked(coupon, ctx):
    """Lock, release, lock again: AVAILABLE v1 → LOCKED v4, held by order B.

    Answers a snapshot read at v1 (before any of it) and order A's proof (stale now)."""
    stale = UserCoupon.objects.get(pk=coupon.pk)
    _, proof_a = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof_a, ctx=ctx)
    lock(coupon, ctx, order_id="order-B")
    return stale, proof_a


def stale_write(coupon, op_type, to_state, expected_version, ctx, **command):
    with transaction.atomic():
        return apply_transition(coupon, Command(op_type, ctx, clock.now(), **command), to_state,
                                expected_version)


def test_stale_expected_version_is_a_version_conflict_that_changes_nothing(coupon, ctx):
    stale = UserCoupon.objects.get(pk=coupon.pk)  # AVAILABLE v1
    _, proof = lock(coupon, ctx)
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)  # AVAILABLE again, at v3
    before = world()

    with pytest.raises(VersionConflict) as caught:
        stale_write(stale, OperationType.VOID, CouponStatus.VOID, 1, ctx)

    assert caught.value.details == {"current_state": "AVAILABLE", "current_version": 3}
    assert world() == before  # the row, the ledger and the outbox as they were
    # The caller's snapshot is brought up to date, so a retry starts from the truth.
    assert (stale.status, stale.state_version) == ("AVAILABLE", 3)


def test_snapshot_whose_state_is_stale_is_refused_even_with_the_current_version(coupon, ctx):
    stale = UserCoupon.objects.get(pk=coupon.pk)  # AVAILABLE v1
    lock(coupon, ctx)  # LOCKED v2
    before = world()

    with pytest.raises(VersionConflict) as caught:
        stale_write(stale, OperationType.VOID, CouponStatus.VOID, 2, ctx)

    assert caught.value.details == {"current_state": "LOCKED", "current_version": 2}
    assert world() == before


def test_old_lease_owner_cannot_write_over_a_newer_lease_at_the_same_version(coupon, ctx):
    _, proof_a = relocked(coupon, ctx)
    current = UserCoupon.objects.get(pk=coupon.pk)  # LOCKED v4, held by order B
    before = world()

    with pytest.raises(VersionConflict) as caught:
        stale_write(current, OperationType.RELEASE, CouponStatus.AVAILABLE, 4, ctx,
                    owner=(proof_a.order_id, proof_a.token_hash), changes=UNBOUND)

    assert caught.value.details == {"current_state": "LOCKED", "current_version": 4}
    assert world() == before
    current.refresh_from_db()
    assert (current.locked_order_id, current.state_version) == ("order-B", 4)


def test_current_caller_passes_the_same_compare_and_set(coupon, ctx):
    """The control: with the version and owner it holds, the same write goes through once."""
    relocked(coupon, ctx)
    current = UserCoupon.objects.get(pk=coupon.pk)

    operation = stale_write(current, OperationType.RELEASE, CouponStatus.AVAILABLE, 4, ctx,
                            owner=(current.locked_order_id, current.lock_token_hash),
                            changes=UNBOUND,
                            ledger={"order_id": "order-B", "lock": current.current_lock})

    assert (operation.from_version, operation.to_version, operation.to_state) == (
        4, 5, "AVAILABLE")
    assert operation.outbox_event.event_type == "CouponReleased"
    current.refresh_from_db()
    assert (current.status, current.state_version, current.locked_order_id) == (
        "AVAILABLE", 5, None)
    # The lease row is the command's job, not the CAS's: end it so the coupon stays whole.
    CouponLock.objects.filter(pk=operation.lock_id).update(status=LockStatus.RELEASED)


def test_transition_the_state_machine_forbids_is_refused_before_any_write(coupon, ctx):
    """apply_transition checks the TRANSITIONS table itself, whatever guard a caller ran."""
    before = world()

    with pytest.raises(InvalidState) as caught:
        stale_write(coupon, OperationType.VOID, CouponStatus.AVAILABLE, 1, ctx)

    assert caught.value.message == "VOID cannot go AVAILABLE→AVAILABLE."
    assert caught.value.details == {"current_state": "AVAILABLE", "current_version": 1}
    assert world() == before


@pytest.mark.parametrize(
    ("op_type", "from_state", "to_state", "allowed"),
    [
        ("RELEASE", "LOCKED", "EXPIRED", True),
        ("RELEASE", "LOCKED", "USED", False),
        ("EXPIRE", "LOCKED", "EXPIRED", False),  # a state the op has no row for
        ("TELEPORT", "AVAILABLE", "USED", False),  # an op the table does not know
        ("ISSUE", None, "AVAILABLE", False),  # ISSUE is no transition: only the replay's start
    ],
)
def test_the_transitions_table_answers_every_question_with_yes_or_no(
    op_type, from_state, to_state, allowed,
):
    assert is_allowed(op_type, from_state, to_state) is allowed


def test_guard_refuses_an_op_its_state_does_not_allow_and_says_which(coupon):
    with pytest.raises(InvalidState) as caught:
        guard(OperationType.RENEW, coupon)

    assert caught.value.message == "RENEW is not allowed from AVAILABLE."
    assert caught.value.details == {"current_state": "AVAILABLE", "current_version": 1,
                                    "operation": "RENEW"}


# --- a command that lost its row lock -----------------------------------------------------


@pytest.fixture
def unlocked_reads(monkeypatch):
    """The next command on a coupon put in `snapshots` reads that snapshot (taken earlier,
    without a row lock) instead of locking the row: the path the CAS exists for."""
    snapshots = {}

    def stale_row(coupon_id, ctx=None):
        return snapshots.pop(coupon_id, None) or lock_coupon_row(coupon_id, ctx=ctx)

    for module in ("void", "renew"):
        monkeypatch.setattr(f"coupons.services.{module}.lock_coupon_row", stale_row)
    return snapshots


def test_void_without_its_row_lock_answers_version_conflict_not_a_crash(
    coupon, ctx, unlocked_reads,
):
    unlocked_reads[coupon.pk] = UserCoupon.objects.select_related("current_lock").get(
        pk=coupon.pk)
    lock(coupon, ctx)  # someone locks the coupon after our unlocked read

    with refused("VERSION_CONFLICT", op_type="VOID", coupon_id=coupon.pk) as caught:
        coupon_void(coupon_id=coupon.pk, expected_version=1, reason="risk", ctx=ctx)

    assert caught.value.details == {"current_state": "LOCKED", "current_version": 2}


def test_renew_without_its_row_lock_answers_version_conflict_not_a_crash(
    coupon, ctx, unlocked_reads,
):
    _, proof = lock(coupon, ctx)
    stale = UserCoupon.objects.select_related("current_lock").get(pk=coupon.pk)  # LOCKED v2
    coupon_renew(coupon_id=coupon.pk, lease=proof, ctx=ctx, lease_seconds=600)  # now v3
    unlocked_reads[coupon.pk] = stale

    with refused("VERSION_CONFLICT", op_type="RENEW", coupon_id=coupon.pk) as caught:
        coupon_renew(coupon_id=coupon.pk, lease=proof, ctx=ctx, lease_seconds=900)

    assert caught.value.details == {"current_state": "LOCKED", "current_version": 3}


def test_api_void_without_its_row_lock_is_a_409(api, coupon, ctx, unlocked_reads):
    unlocked_reads[coupon.pk] = UserCoupon.objects.select_related("current_lock").get(
        pk=coupon.pk)
    lock(coupon, ctx)

    response = api.post(f"/api/v1/coupons/{coupon.pk}/void",
                        {"expected_version": 1, "reason": "risk"}, format="json",
                        HTTP_IDEMPOTENCY_KEY="void-without-row-lock")

    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "VERSION_CONFLICT"
    assert (error["details"]["current_state"], error["details"]["current_version"]) == (
        "LOCKED", 2)
    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("LOCKED", 2)


def test_a_missed_compare_and_set_writes_none_of_the_commands_rows(coupon, ctx):
    """A command's rows ride on its CAS (one statement, inserts selecting from the UPDATE's
    RETURNING): a stale CAS writes none."""
    stale = UserCoupon.objects.get(pk=coupon.pk)  # AVAILABLE v1
    lock(coupon, ctx)  # LOCKED v2
    now = clock.now()
    second_lease = CouponLock(coupon=coupon, order_id="order-X", token_hash="x" * 64,
                              token_key_id="k1", locked_at=now,
                              expires_at=now + timedelta(hours=1), acquired_version=2)
    order_link = OrderCoupon(lock=second_lease, coupon=coupon, order_id="order-X",
                             order_amount=Decimal("300.00"), discount_amount=Decimal("10.00"),
                             template_version_id=coupon.template_version_id, created_at=now)
    before = world()

    with pytest.raises(VersionConflict):
        stale_write(stale, OperationType.LOCK, CouponStatus.LOCKED, 1, ctx,
                    changes={"current_lock": second_lease}, new_lease=(second_lease, order_link))

    assert world() == before  # no second lease nor order link, the held lease ACTIVE, no ledger
    assert not OrderCoupon.objects.filter(order_id="order-X").exists()


def test_a_missed_compare_and_set_changes_no_declared_row_even_before_a_rollback(coupon, ctx):
    """A caller that catches the conflict and goes on in the same transaction (nothing rolls
    the statement back) still finds the rows the command declared as they were: on PostgreSQL
    each declared update asks whether the compare-and-set matched."""
    _, proof = lock(coupon, ctx)  # LOCKED v2
    coupon_renew(coupon_id=coupon.pk, lease=proof, ctx=ctx, lease_seconds=600)  # now v3
    current = UserCoupon.objects.get(pk=coupon.pk)
    lease_end = CouponLock.objects.get(pk=current.current_lock_id).expires_at

    with transaction.atomic():
        with pytest.raises(VersionConflict):
            apply_transition(current, Command(
                OperationType.RENEW, ctx, clock.now(), owner=(proof.order_id, proof.token_hash),
                lease_changes={"expires_at": lease_end + timedelta(days=30)}),
                CouponStatus.LOCKED, 2)
        seen = CouponLock.objects.get(pk=current.current_lock_id).expires_at

    assert seen == lease_end

"""Coupons broken on purpose, one way per invariant (docs/design.md), for the checker to catch.

Each case first builds an honest history through the services, then breaks it the way a bug
or a hand edit would: a raw `.update()` of the coupon, lock or redemption row, or an extra row
appended by a writer that skipped the checks. History already written is never edited or
deleted (the ledger is append-only and may refuse it), so only this module has to change if
the ledger's own rules change. CASES gives, per case, the invariant the report must name,
the problem it must report (a regular expression for the whole message), and any other
invariant the same breakage also breaks.
"""

from dataclasses import replace
from decimal import Decimal
from tempfile import TemporaryDirectory

from django.db import connection
from django.db.models import F

from coupons import clock
from coupons.evidence.replay import coupon_check
from coupons.models import (
    CheckWatermark,
    CommandRejection,
    ConflictCase,
    CouponLock,
    CouponOperation,
    CouponStatus,
    InboxMessage,
    LockStatus,
    OperationType,
    Redemption,
    UserCoupon,
)
from coupons.services import (
    CommandContext,
    LeaseProof,
    coupon_issue,
    coupon_redeem,
    coupon_release,
    coupon_renew,
)
from coupons.services.cases import case_open
from coupons.write.declared import declared_insert, declared_moves
from coupons.write.records import append_operation, append_outbox
from refunds.services.refund_receive import refund_receive
from tests.app_role import as_owner, past_the_triggers
from tests.conftest import lock
from tests.signed_head import sign_head

ROGUE = CommandContext(actor="test:rogue-writer")


def issued(template, ctx):
    return coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon


def taken_over(template, ctx):
    """Order A locked and released, order B holds the lease now: answers (coupon, lock A)."""
    coupon = issued(template, ctx)
    _, proof_a = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof_a, ctx=ctx, reason="order closed")
    lock(coupon, ctx, order_id="order-B")
    return coupon, CouponLock.objects.get(coupon=coupon, order_id="order-A")


def redeemed(template, ctx):
    coupon = issued(template, ctx)
    _, proof = lock(coupon, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P1", ctx=ctx)
    return UserCoupon.objects.get(pk=coupon.pk)


def fresh(coupon):
    return UserCoupon.objects.get(pk=coupon.pk)


def drop_unique_index(name: str) -> None:
    """Lose a partial unique index (a restored dump, a bad migration); the test's transaction
    rolls the DDL back. Only the owner may (tests/app_role.py)."""
    with as_owner(), connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {connection.ops.quote_name(name)}")


def forge(coupon, op_type, *, from_state, to_state, from_version=None, to_version=None,
          outbox=True, **fields) -> CouponOperation:
    """Append a ledger row (and its outbox row) the way a writer that skipped every check
    would, and move the coupon row to where that row says it went."""
    coupon = fresh(coupon)
    from_version = coupon.state_version if from_version is None else from_version
    coupon.status = to_state
    coupon.state_version = from_version + 1 if to_version is None else to_version
    operation = append_operation(
        coupon=coupon, op_type=op_type, from_state=from_state, from_version=from_version,
        ctx=ROGUE, now=clock.now(), **fields,
    )
    if outbox:
        append_outbox(operation)
    # Past the triggers: the database refuses a version gap or a forbidden move to any login
    # (coupons/models/state_moves.py); these cases are about what gets past it.
    with past_the_triggers():
        UserCoupon.objects.filter(pk=coupon.pk).update(
            status=coupon.status, state_version=coupon.state_version
        )
    return operation


# --- 1. at most one active lock ----------------------------------------------------------

def two_active_locks(template, ctx):
    coupon, lock_a = taken_over(template, ctx)
    drop_unique_index("one_active_lock")
    CouponLock.objects.filter(pk=lock_a.pk).update(status=LockStatus.ACTIVE, ended_at=None)
    return coupon


def lock_left_active_after_release(template, ctx):
    coupon = issued(template, ctx)
    _, proof = lock(coupon, ctx)
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
    CouponLock.objects.filter(coupon=coupon).update(status=LockStatus.ACTIVE, ended_at=None)
    return coupon


def locked_without_an_active_lock(template, ctx):
    coupon = issued(template, ctx)
    lock(coupon, ctx)
    CouponLock.objects.filter(coupon=coupon).update(status=LockStatus.RELEASED)
    return coupon


# --- 2. at most one successful redemption ------------------------------------------------

def two_successful_redemptions(template, ctx):
    coupon, lock_a = taken_over(template, ctx)
    proof_b = lock_b_proof(coupon)
    coupon_redeem(coupon_id=coupon.pk, lease=proof_b, payment_id="P-B", ctx=ctx)
    drop_unique_index("one_successful_redemption")
    declared_insert(Redemption(coupon=coupon, lock=lock_a, order_id="order-A", payment_id="P-A",
                               discount_amount="30.00", created_at=clock.now()),
                    actor=ROGUE.actor)
    return coupon


def used_without_a_redemption(template, ctx):
    coupon = redeemed(template, ctx)
    stop_counting(coupon)
    return coupon


def stop_counting(coupon):
    """The coupon's redemption stops counting, journaled as the services would: a writer that
    skipped the ledger, not one that skipped the journal."""
    declared_moves(Redemption.objects.filter(coupon=coupon), {"succeeded": False},
                   step="returned", actor=ROGUE.actor)


def lock_b_proof(coupon):
    current = fresh(coupon)
    return LeaseProof.from_lock(current.current_lock, expected_version=current.state_version)


# --- 3. an old lock token never changes a newer lease ------------------------------------

def stale_token_renewed_a_newer_lease(template, ctx):
    coupon, lock_a = taken_over(template, ctx)
    forge(coupon, OperationType.RENEW, from_state=CouponStatus.LOCKED,
          to_state=CouponStatus.LOCKED, order_id="order-A", lock=lock_a)
    return coupon


def lease_bound_to_a_stale_token(template, ctx):
    coupon, lock_a = taken_over(template, ctx)
    with past_the_triggers():  # a lease moved without its version: the trigger refuses it
        UserCoupon.objects.filter(pk=coupon.pk).update(lock_token_hash=lock_a.token_hash)
    return coupon


# --- 4. every state change raises state_version by exactly one ---------------------------

def version_gap(template, ctx):
    coupon = issued(template, ctx)
    result, _ = lock(coupon, ctx)
    forge(coupon, OperationType.RENEW, from_state=CouponStatus.LOCKED,
          to_state=CouponStatus.LOCKED, from_version=3, order_id="order-A", lock=result.lock)
    return coupon


def version_jump(template, ctx):
    coupon = issued(template, ctx)
    result, _ = lock(coupon, ctx)
    forge(coupon, OperationType.RENEW, from_state=CouponStatus.LOCKED,
          to_state=CouponStatus.LOCKED, to_version=4, order_id="order-A", lock=result.lock)
    return coupon


# --- 5. every successful command has exactly one ledger (and outbox) row -----------------

def change_without_outbox_event(template, ctx):
    coupon = issued(template, ctx)
    result, proof = lock(coupon, ctx)
    forge(coupon, OperationType.RENEW, from_state=CouponStatus.LOCKED,
          to_state=CouponStatus.LOCKED, outbox=False, order_id="order-A", lock=result.lock)
    # History goes on: from here ledger and outbox ids no longer run in step, so a checker
    # that matched events to operations by the wrong id would blame the wrong row.
    coupon_renew(coupon_id=coupon.pk, lease=replace(proof, expected_version=3), ctx=ctx,
                 lease_seconds=600)
    return coupon


def lock_without_ledger_row(template, ctx):
    coupon = issued(template, ctx)
    now = clock.now()
    CouponLock.objects.create(coupon=coupon, order_id="order-X", token_hash="0" * 64,
                              status=LockStatus.RELEASED, locked_at=now, expires_at=now,
                              acquired_version=2, ended_at=now)
    return coupon


def redemption_without_ledger_row(template, ctx):
    coupon, lock_a = taken_over(template, ctx)
    declared_insert(Redemption(coupon=coupon, lock=lock_a, order_id="order-A", payment_id="P-A",
                               discount_amount="30.00", succeeded=False,
                               created_at=clock.now()), actor=ROGUE.actor)
    return coupon


# --- 6. a return references the original redemption --------------------------------------
# The invariants (docs/design.md) also ask for the return policy version; no return service exists
# yet to record it, so the checker (and this module) hold a RETURN to its redemption reference only.

def return_without_redemption(template, ctx):
    coupon = redeemed(template, ctx)
    forge(coupon, OperationType.RETURN, from_state=CouponStatus.USED,
          to_state=CouponStatus.AVAILABLE, refund_id="R1")
    return coupon


def return_naming_the_lock_not_the_redemption(template, ctx):
    coupon = redeemed(template, ctx)
    stop_counting(coupon)
    forge(coupon, OperationType.RETURN, from_state=CouponStatus.USED,
          to_state=CouponStatus.AVAILABLE, refund_id="R1",
          original_operation=coupon.operations.get(op_type=OperationType.LOCK))
    return coupon


# --- 7. replaying the ledger gives the coupon's current state and version ----------------

def state_changed_without_ledger_row(template, ctx):
    coupon = issued(template, ctx)
    UserCoupon.objects.filter(pk=coupon.pk).update(status=CouponStatus.VOID,
                                                   state_version=F("state_version") + 1)
    return coupon


def version_bumped_without_ledger_row(template, ctx):
    coupon = issued(template, ctx)
    UserCoupon.objects.filter(pk=coupon.pk).update(state_version=F("state_version") + 1)
    return coupon


def transition_the_state_machine_forbids(template, ctx):
    coupon = issued(template, ctx)
    forge(coupon, OperationType.VOID, from_state=CouponStatus.AVAILABLE,
          to_state=CouponStatus.AVAILABLE)
    return coupon


def step_from_a_state_the_coupon_was_not_in(template, ctx):
    coupon = issued(template, ctx)
    forge(coupon, OperationType.EXPIRE, from_state=CouponStatus.LOCKED,
          to_state=CouponStatus.EXPIRED)
    return coupon


def issued_twice(template, ctx):
    coupon = issued(template, ctx)
    forge(coupon, OperationType.ISSUE, from_state="", to_state=CouponStatus.AVAILABLE)
    return coupon


# --- 8. inbox messages are the fold of their journal entries ------------------------------

def inbox_message_edited_past_the_journal(template, ctx):
    """A payment fact about the coupon's order whose payload was changed after it was received."""
    coupon = redeemed(template, ctx)
    message = declared_insert(InboxMessage(
        message_id="m-1", fact_type="PaymentSucceeded", order_id="order-A",
        occurred_at=clock.now(), payload={"payment_id": "P1"}, sender="orders",
        sender_scope="client:1", content_hash="0" * 64, received_at=clock.now()),
        actor="client:1")
    with past_the_triggers():
        InboxMessage.objects.filter(pk=message.pk).update(payload={"payment_id": "P-forged"})
    return coupon


# --- 9. every evidence row is the fold of its journal entries ------------------------------

def refusal_written_past_the_journal(template, ctx):
    """A refusal inserted past the triggers (the owner's login; the app's would be journaled):
    no journal entry."""
    coupon = issued(template, ctx)
    with past_the_triggers():
        CommandRejection.objects.bulk_create([CommandRejection(
            op_type="LOCK", coupon_id_ref=coupon.pk, actor=ROGUE.actor,
            error_code="STATE_CONFLICT", message="made up", created_at=clock.now(),
        )])
    return coupon


def refusal_inserted_below_the_checks_mark(template, ctx):
    """After cron signed a head and a check held on it (and kept its marks), the owner inserts
    a refusal with id -1, below every id a check has read, past the journal: the count up to
    the mark shows it."""
    coupon = issued(template, ctx)
    with TemporaryDirectory() as directory:
        sign_head(directory)
    assert coupon_check(fresh(coupon)).ok
    assert CheckWatermark.objects.filter(coupon=coupon).exists()
    with past_the_triggers():
        CommandRejection.objects.bulk_create([CommandRejection(
            id=-1, op_type="LOCK", coupon_id_ref=coupon.pk, actor=ROGUE.actor,
            error_code="STATE_CONFLICT", message="made up", created_at=clock.now())])
    return coupon


def case_dismissed_past_the_services(template, ctx):
    """A conflict case "dismissed" by one UPDATE, as another operator, with a made-up note,
    past the triggers (the owner's login: the application's is refused by the journal trigger
    unless it declares the step, and then the step is an entry like any other)."""
    coupon = redeemed(template, ctx)
    case = case_open(coupon=coupon, order_id="order-late", fact_type="PaymentSucceeded",
                     evidence={"payment_id": "P-late"})
    with past_the_triggers():
        ConflictCase.objects.filter(pk=case.pk).update(
            status="DISMISSED", resolution="DISMISSED", resolved_by="user:op2",
            resolution_note="duplicate", resolved_at=clock.now())
    return coupon


CASES = [
    (two_active_locks, 1, "2 active locks", set()),
    (lock_left_active_after_release, 1, "AVAILABLE but a lock is still active", set()),
    (locked_without_an_active_lock, 1,
     "LOCKED without its current lock being the one active lock", set()),
    # Lock A never redeemed in the ledger: its redemption also lacks a REDEEM row.
    (two_successful_redemptions, 2, "2 successful redemptions", {5}),
    (used_without_a_redemption, 2, "USED without exactly one successful redemption", set()),
    (stale_token_renewed_a_newer_lease, 3,
     "RENEW v4→v5 was made with lock .+, not the current lease", set()),
    (lease_bound_to_a_stale_token, 3, "the coupon's lease binding differs from its active lock",
     set()),
    (version_gap, 4, "RENEW v3→v4 follows v2: the ledger has a gap", set()),
    (version_jump, 4, "RENEW v2→v4 does not raise the version by exactly one", set()),
    (change_without_outbox_event, 5, "RENEW v3 has no outbox event", set()),
    (lock_without_ledger_row, 5, "lock .+ has no LOCK ledger row", set()),
    (redemption_without_ledger_row, 5, "redemption .+ has no REDEEM ledger row", set()),
    (return_without_redemption, 6,
     "RETURN v3→v4 does not reference the original redemption", set()),
    (return_naming_the_lock_not_the_redemption, 6,
     "RETURN v3→v4 does not reference the original redemption",
     set()),
    (state_changed_without_ledger_row, 7, "ledger replays to AVAILABLE v1, row says VOID v2",
     set()),
    (version_bumped_without_ledger_row, 7, "ledger replays to AVAILABLE v1, row says AVAILABLE v2",
     set()),
    (transition_the_state_machine_forbids, 7,
     "VOID v1→v2: AVAILABLE→AVAILABLE does not follow AVAILABLE", set()),
    (step_from_a_state_the_coupon_was_not_in, 7,
     "EXPIRE v1→v2: LOCKED→EXPIRED does not follow AVAILABLE", set()),
    (issued_twice, 7, "ISSUE v1→v2: a second ISSUE", set()),
    (inbox_message_edited_past_the_journal, 8, r'inbox message \d+: payload is \{"payment_id": '
     r'"P-forged"\}, its journal says \{"payment_id": "P1"\}', set()),
    (refusal_written_past_the_journal, 9, r"command rejection \d+: has no journal entry", set()),
    (refusal_inserted_below_the_checks_mark, 9, "command rejection -1: has no journal entry",
     set()),
    (case_dismissed_past_the_services, 9,
     r'conflict case \d+: status is "DISMISSED", its journal says "OPEN"', set()),
]


def honest_return(template, ctx):
    """Not a breakage: a full refund under the default policy returns the coupon, so the
    checker is shown to accept what it must accept."""
    coupon = redeemed(template, ctx)
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    return coupon

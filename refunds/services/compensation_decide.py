from contextlib import contextmanager

from django.db import transaction
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.effects import Plan, Step
from coupons.errors import (
    CompensationNotOpen,
    CouponError,
    InvalidState,
    NotFound,
    SameOperator,
    ValidationFailed,
)
from coupons.evidence.journal import require_folds, with_journal
from coupons.evidence.tips import require_tip
from coupons.ledger_reasons import reason, reason_fields
from coupons.models import CouponStatus, OperationType
from coupons.services.reversals import restore_redemption, reversal_reads_of, reversal_target
from coupons.write.declared import declared_update
from coupons.write.refusals import refusals_recorded
from coupons.write.rows import lock_coupon_row
from coupons.write.transitions import UNBOUND, Command, apply_transition
from refunds.models import Compensation


def compensation_approve(*, compensation_id, seen_entry: str, note: str = "",
                         ctx) -> Compensation:
    """A second operator approves: a reversal appends a REVERSE row that names the reversed
    operation and restores the state before it; money appends a COMPENSATE row with the
    amount and no change of state. Both through the one compare-and-set (docs/design.md).
    `seen_entry` is the hash of the compensation's newest journal entry the operator saw."""
    with _deciding(compensation_id, seen_entry, "COMP_APPROVE", ctx) as (
            coupon, compensation, now):
        step = _approval_step(coupon, compensation, now)
        if step.op_type == OperationType.REVERSE:
            operation = _reverse(coupon, compensation, step, ctx=ctx, now=now)
        else:
            operation = _pay(coupon, compensation, step, ctx=ctx, now=now)
        return _decided(compensation, Compensation.Status.APPROVED, note, ctx, now,
                        resulting_operation=operation)


def approval_plan(compensation: Compensation, coupon) -> Plan:
    """What approving would write now: the row `compensation_approve` appends, or its refusal.
    Read without locks, for the page (from the reads a queue page made for all its rows, when
    it did: coupons.services.reversals.with_reversal_reads); the approval checks again under
    the coupon's lock."""
    try:
        step = _approval_step(coupon, compensation, clock.now(),
                              reads=reversal_reads_of(compensation))
        return Plan(steps=(step,), state=coupon.status)
    except CouponError as refusal:
        return Plan(refusal=refusal, state=coupon.status)


def _approval_step(coupon, compensation, now, *, reads=None) -> Step:
    """A reversal restores the state before its operation; every other kind is money owed,
    paid with a COMPENSATE row that keeps the coupon's state."""
    if compensation.kind == Compensation.Kind.REVERSE_OPERATION:
        return Step.row(OperationType.REVERSE, coupon.status,
                        reversal_target(coupon, compensation.operation, now, reads=reads))
    if coupon.status == CouponStatus.LOCKED:
        # COMPENSATE raises the version; the order holding the lease would find its
        # expected_version stale and its payment refused. Decide once the lease has ended.
        raise InvalidState(
            _("An order holds the coupon's lease; approve the money once the lease has ended."),
            coupon=coupon, compensation_id=compensation.pk,
            locked_order_id=coupon.locked_order_id,
        )
    return Step.row(OperationType.COMPENSATE, coupon.status, coupon.status,
                    amount=compensation.amount)


def compensation_reject(*, compensation_id, seen_entry: str, note: str, ctx) -> Compensation:
    """A second operator rejects, saying why: no ledger row, the proposal stays on record."""
    with _deciding(compensation_id, seen_entry, "COMP_REJECT", ctx) as (
            _coupon, compensation, now):
        if not note.strip():
            raise ValidationFailed(_("Say why it is rejected."),
                                   note=gettext("Required to reject."))
        return _decided(compensation, Compensation.Status.REJECTED, note, ctx, now)


@contextmanager
def _deciding(compensation_id, seen_entry: str, op_type: str, ctx):
    """Lock the coupon, then the compensation (coupon before its compensations, everywhere);
    check that it is what its journal says was proposed, that it is still open, that it is
    the version the decider saw and that the decider is not its proposer. A refusal rolls
    back and is recorded with the decider."""
    coupon_id, order_id = (
        Compensation.objects.filter(pk=compensation_id).values_list("coupon_id", "order_id")
        .first() or (None, "")
    )
    with (
        refusals_recorded(op_type, ctx, coupon_id=coupon_id, order_id=order_id),
        transaction.atomic(),
    ):
        if coupon_id is None:
            raise NotFound(_("No such compensation."), compensation_id=compensation_id)
        coupon = lock_coupon_row(coupon_id)
        compensation = with_journal(Compensation.objects.select_for_update(of=("self",))
                                    .select_related("operation")).get(pk=compensation_id)
        # First: an amount, a kind or a proposer changed past the services is never decided
        # on, and four eyes are checked against the proposer the journal names.
        require_folds(compensation)
        if compensation.status != Compensation.Status.PROPOSED:
            raise CompensationNotOpen(current_state=compensation.status,
                                      compensation_id=compensation.pk,
                                      decided_by=compensation.decided_by)
        # Decided on the version the operator was shown, not one that moved since.
        require_tip(compensation, seen_entry)
        if compensation.created_by == ctx.actor:
            # Four eyes: the proposer never decides, whatever capabilities they hold.
            raise SameOperator(compensation_id=compensation.pk,
                               proposed_by=compensation.created_by)
        yield coupon, compensation, clock.now()


def _reverse(coupon, compensation, step, *, ctx, now):
    operation = compensation.operation
    restore_redemption(operation, actor=ctx.actor, now=now)
    command = Command(step.op_type, ctx, now, changes=UNBOUND, ledger={
        "original_operation": operation, "order_id": operation.order_id,
        "payment_id": operation.payment_id, "refund_id": operation.refund_id,
        **reason_fields(reason("compensation", compensation=compensation.pk,
                               reason=compensation.reason))})
    return apply_transition(coupon, command, step.to_state, coupon.state_version)


def _pay(coupon, compensation, step, *, ctx, now):
    command = Command(step.op_type, ctx, now, ledger={
        "original_operation": compensation.operation, "order_id": compensation.order_id,
        "amount": step.amount,
        **reason_fields(reason("compensation_of_kind", compensation=compensation.pk,
                               kind=compensation.kind, reason=compensation.reason))})
    return apply_transition(coupon, command, step.to_state, coupon.state_version)


def _decided(compensation, status, note, ctx, now, *, resulting_operation=None):
    # Its entry names the proposal's entry as its parent (the row lock keeps it the tip).
    declared_update(
        compensation, where={"status": Compensation.Status.PROPOSED},
        changes={"status": status, "decided_by": ctx.actor, "decided_at": now,
                 "decision_note": note[:1000], "resulting_operation": resulting_operation},
        step="approved" if status == Compensation.Status.APPROVED else "rejected",
        actor=ctx.actor,
    )
    return compensation

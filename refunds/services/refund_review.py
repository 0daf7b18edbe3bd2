"""Operators approve or reject refund decisions waiting for them (docs/api.md)."""

from contextlib import contextmanager

from django.db import transaction
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.errors import DecisionNotPending, InvalidState, NotFound, ValidationFailed
from coupons.evidence.journal import require_folds, with_journal
from coupons.evidence.tips import require_tip
from coupons.models import CouponStatus
from coupons.refusal_messages import refusal_message
from coupons.write.refusals import refusals_recorded
from coupons.write.rows import lock_coupon_row
from refunds.models import RefundCoupon
from refunds.services.refund_execute import (
    Action,
    Status,
    decision_finish,
    decision_move,
    execution_plan,
)

# What an operator may choose for a MANUAL_REVIEW decision (COMPENSATE needs the policy's
# compensation, which a manual review does not carry).
MANUAL_CHOICES = (Action.RETURN, Action.KEEP_USED, Action.VOID)


def actions_allowed(decision: RefundCoupon, coupon) -> tuple[str, ...]:
    """What approving `decision` may carry out on the coupon as it is now: a manual review's
    choices, or the decided action, each only while the coupon's state allows it. The coupon
    may have moved since the decision (a reversal, a void): a coupon already available again
    cannot be returned twice, and "keep it used" says nothing true of a coupon no longer used."""
    wanted = MANUAL_CHOICES if decision.action == Action.MANUAL_REVIEW else (decision.action,)
    return tuple(action for action in wanted if _fits(decision, action, coupon))


def _fits(decision, action, coupon) -> bool:
    if action == Action.KEEP_USED:
        return coupon.status == CouponStatus.USED
    return execution_plan(decision, action, coupon).refusal is None


@contextmanager
def _reviewing(decision_id, op_type: str, ctx):
    """A refusal rolls back and is recorded with the reviewer, as a compensation's is."""
    coupon_id, order_id = (
        RefundCoupon.objects.filter(pk=decision_id).values_list("coupon_id", "order_id")
        .first() or (None, "")
    )
    with refusals_recorded(op_type, ctx, coupon_id=coupon_id, order_id=order_id), \
            transaction.atomic():
        if coupon_id is None:
            raise NotFound(_("No such refund decision."), decision_id=decision_id)
        yield coupon_id


def _pending(coupon_id, decision_id, seen_entry: str) -> RefundCoupon:
    """Lock order: the coupon row, then the decision row."""
    lock_coupon_row(coupon_id)
    # of=self: the joined redemption is nullable (PostgreSQL cannot lock through an outer join).
    decision = with_journal(RefundCoupon.objects.select_for_update(of=("self",))
                            .select_related("redemption")).get(pk=decision_id)
    # What the operator approves is what the journal recorded: an action, a status or a risk
    # flag changed past the services is refused here, not executed.
    require_folds(decision)
    if decision.status != Status.PENDING_APPROVAL:
        raise DecisionNotPending(current_state=decision.status, decision_id=decision.pk)
    # What the operator approves is also the version they were shown: a decision whose
    # journal moved since (a compensation recorded, a step appended by a stolen login) is
    # looked at again, not decided on sight of the one before.
    require_tip(decision, seen_entry)
    return decision


def refund_approve(*, decision_id, seen_entry: str, note: str, ctx,
                   action: str | None = None) -> RefundCoupon:
    """Execute the decision (or, for a manual review, the action the operator chose).
    `seen_entry` is the hash of the decision's newest journal entry the operator was shown."""
    with _reviewing(decision_id, "REFUND_APPROVE", ctx) as coupon_id:
        decision = _pending(coupon_id, decision_id, seen_entry)
        if decision.action == Action.MANUAL_REVIEW:
            if action not in MANUAL_CHOICES:
                raise ValidationFailed(_("Choose what happens to the coupon."),
                                       action=gettext("One of %(choices)s.")
                                       % {"choices": ", ".join(MANUAL_CHOICES)})
        elif action not in (None, "", decision.action):
            raise ValidationFailed(_("Approve the decision as it is, or reject it."),
                                   action=gettext("This decision is %(action)s.")
                                   % {"action": decision.action})
        chosen = action or decision.action
        coupon = lock_coupon_row(decision.coupon_id)
        if chosen not in actions_allowed(decision, coupon):
            raise InvalidState(refusal_message(
                "decision_no_longer_fits", state=coupon.status, version=coupon.state_version,
                action=chosen), coupon=coupon, action=chosen, decision_id=decision.pk)
        now = clock.now()
        decision = decision_finish(
            decision, from_status=Status.PENDING_APPROVAL, execute=chosen, coupon=coupon, ctx=ctx,
            now=now, reviewed_by=ctx.actor, reviewed_at=now, review_note=note[:1000],
        )
        return decision


def refund_reject(*, decision_id, seen_entry: str, note: str, ctx) -> RefundCoupon:
    """Record that the coupon keeps its state; the note says why."""
    if not note.strip():
        raise ValidationFailed(_("Say why the decision is rejected."), note=gettext("Required."))
    with _reviewing(decision_id, "REFUND_REJECT", ctx) as coupon_id:
        decision = _pending(coupon_id, decision_id, seen_entry)
        now = clock.now()
        decision = decision_move(
            decision, from_status=Status.PENDING_APPROVAL, actor=ctx.actor, now=now,
            status=Status.REJECTED, reviewed_by=ctx.actor, reviewed_at=now,
            review_note=note[:1000],
        )
        return decision

"""Carrying out a refund decision, and moving its status, for the receive and review services.

Callers hold the coupon row lock (lock order: coupon → refund record) and an open transaction.
"""

from dataclasses import replace
from decimal import Decimal

from coupons.errors import DecisionNotPending
from coupons.evidence.journal import journaled_update
from coupons.models import CouponOperation
from coupons.services.issue import coupon_issue
from coupons.services.void import coupon_void
from refunds.models import Compensation, RefundCoupon
from refunds.services.compensation_record import compensation_record
from refunds.services.coupon_return import coupon_return

Action = RefundCoupon.Action
Status = RefundCoupon.Status


def move_kind(status: str, fields: dict) -> str:
    """The journal entry's kind for a move to `status`."""
    if "reviewed_by" in fields and status != Status.REJECTED:
        return "approved"
    return {Status.AWAITING_REDEMPTION: "waiting", Status.PENDING_APPROVAL: "recommended",
            Status.DECIDED: "decided", Status.EXECUTED: "executed",
            Status.REJECTED: "rejected"}[status]


def decision_move(decision: RefundCoupon, *, from_status: str, actor: str, now,
                  **fields) -> RefundCoupon:
    """Compare-and-set the decision's status: exactly one row must still be in `from_status`.
    Its journal entry (and the row's new seal) are written in the same statement."""
    kind = move_kind(fields.get("status", from_status), fields)
    if not journaled_update(decision, where={"status": from_status}, changes=fields, kind=kind,
                            actor=actor, at=now):
        decision.refresh_from_db()
        raise DecisionNotPending(current_state=decision.status, decision_id=decision.pk)
    return decision


def decision_execute(decision: RefundCoupon, action: str, coupon, ctx) -> dict:
    """Apply `action` to the coupon through the services; answers the fields that record it.

    Raises the command's CouponError when the coupon refuses (it moved on since the decision).
    """
    # The caller's Idempotency-Key answer is the decision, not a nested command's result.
    ctx = replace(ctx, idempotency_record_id=None)
    why = f"refund {decision.refund_id} of order {decision.order_id}: {decision.rule_label}"
    if action == Action.RETURN:
        _, operation = coupon_return(
            coupon_id=coupon.pk, redemption=decision.redemption, refund_id=decision.refund_id,
            expected_version=coupon.state_version, ctx=ctx, reason=why,
        )
        return {"operation": operation}
    if action == Action.VOID:
        result = coupon_void(coupon_id=coupon.pk, expected_version=coupon.state_version,
                             reason=why, refund_id=decision.refund_id, ctx=ctx)
        return {"operation": CouponOperation.objects.get(coupon=coupon,
                                                         to_version=result.state_version)}
    if action == Action.COMPENSATE:
        spec = decision.compensation or {}
        if "template_id" in spec:
            issued = coupon_issue(template_id=spec["template_id"], user_id=coupon.user_id, ctx=ctx)
            return {"compensation_coupon": issued.coupon}
        credit = compensation_record(
            kind=Compensation.Kind.REFUND_CREDIT, order_id=decision.order_id, coupon=coupon,
            amount=Decimal(str(spec.get("amount", decision.coupon_share or 0))), reason=why,
            actor=ctx.actor,
        )
        return {"compensation_record": credit}
    return {}  # KEEP_USED: the decision is the record; the coupon stays USED


def final_status(action: str) -> str:
    return Status.DECIDED if action == Action.KEEP_USED else Status.EXECUTED


def decision_finish(decision, *, from_status, execute, coupon, ctx, now,
                    **fields) -> RefundCoupon:
    """Carry out the action `execute` and record it, with `fields`, in the caller's
    transaction."""
    recorded = decision_execute(decision, execute, coupon, ctx)
    return decision_move(decision, from_status=from_status, actor=ctx.actor, now=now,
                         status=final_status(execute), executed_action=execute, **recorded,
                         **fields)

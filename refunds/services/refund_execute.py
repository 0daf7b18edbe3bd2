"""Carrying out a refund decision, and moving its status, for the receive and review services.

Callers hold the coupon row lock (lock order: coupon → refund record) and an open transaction.
"""

from dataclasses import replace
from decimal import Decimal

from coupons import clock
from coupons.effects import Plan, Step
from coupons.errors import CouponError, DecisionNotPending
from coupons.ledger_reasons import reason
from coupons.models import CouponOperation, CouponStatus, OperationType
from coupons.services.issue import coupon_issue
from coupons.services.void import coupon_void
from coupons.write.declared import declared_update
from coupons.write.transitions import guard, is_past_validity
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
    The database journals it as the step move_kind names."""
    step = move_kind(fields.get("status", from_status), fields)
    if not declared_update(decision, where={"status": from_status}, changes=fields, step=step,
                           actor=actor):
        decision.refresh_from_db()
        raise DecisionNotPending(current_state=decision.status, decision_id=decision.pk)
    return decision


def execution_plan(decision: RefundCoupon, action: str, coupon) -> Plan:
    """What executing `action` would do now: the steps `decision_execute` carries out, or the
    refusal the coupon would answer. Read without locks, for the page."""
    try:
        steps = _steps(decision, action, coupon, clock.now())
        for step in steps:  # the execution's services check this under the lock, and log it
            if step.kind == Step.ROW:
                guard(step.op_type, coupon)
        return Plan(steps=steps, state=coupon.status)
    except CouponError as refusal:
        return Plan(refusal=refusal, state=coupon.status)


def _steps(decision, action, coupon, now) -> tuple:
    if action == Action.RETURN:
        to_state = CouponStatus.EXPIRED if is_past_validity(coupon, now) else CouponStatus.AVAILABLE
        return (Step.row(OperationType.RETURN, coupon.status, to_state),)
    if action == Action.VOID:
        return (Step.row(OperationType.VOID, coupon.status, CouponStatus.VOID),)
    if action == Action.COMPENSATE:
        spec = decision.compensation or {}
        if "template_id" in spec:
            return (Step(Step.ISSUE, template_id=spec["template_id"]),)
        return (Step(Step.RECORD, record_kind=Compensation.Kind.REFUND_CREDIT,
                     amount=Decimal(str(spec.get("amount", decision.coupon_share or 0)))),)
    return ()  # KEEP_USED: the decision is the record; the coupon stays USED


def decision_execute(decision: RefundCoupon, action: str, coupon, ctx) -> dict:
    """Carry out the steps of `action` through the services; answers the fields that record it.

    Raises the command's CouponError when the coupon refuses (it moved on since the decision).
    """
    # The caller's Idempotency-Key answer is the decision, not a nested command's result.
    ctx = replace(ctx, idempotency_record_id=None)
    why = reason("refund_of_order", refund=decision.refund_id, order=decision.order_id,
                 rule=decision.rule_label)
    recorded = {}
    for step in _steps(decision, action, coupon, clock.now()):
        if step.op_type == OperationType.RETURN:
            _, recorded["operation"] = coupon_return(
                coupon_id=coupon.pk, redemption=decision.redemption,
                refund_id=decision.refund_id, expected_version=coupon.state_version, ctx=ctx,
                reason=why,
            )
        elif step.op_type == OperationType.VOID:
            result = coupon_void(coupon_id=coupon.pk, expected_version=coupon.state_version,
                                 reason=why, refund_id=decision.refund_id, ctx=ctx)
            recorded["operation"] = CouponOperation.objects.get(
                coupon=coupon, to_version=result.state_version)
        elif step.kind == Step.ISSUE:
            recorded["compensation_coupon"] = coupon_issue(
                template_id=step.template_id, user_id=coupon.user_id, ctx=ctx).coupon
        elif step.kind == Step.RECORD:
            recorded["compensation_record"] = compensation_record(
                kind=step.record_kind, order_id=decision.order_id, coupon=coupon,
                amount=step.amount, reason=why, actor=ctx.actor,
            )
    return recorded


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

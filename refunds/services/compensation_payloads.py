"""The answer of every compensation command and read: what was proposed, decided, appended."""

from coupons.write.payloads import iso, money


def operation_payload(operation) -> dict:
    return {
        "id": operation.pk,
        "op_type": operation.op_type,
        "from_state": operation.from_state,
        "to_state": operation.to_state,
        "from_version": operation.from_version,
        "to_version": operation.to_version,
        "actor": operation.actor,
        "original_operation_id": operation.original_operation_id,
        "amount": money(operation.amount),
        "reason": operation.reason,
        "created_at": iso(operation.created_at),
    }


def compensation_payload(compensation) -> dict:
    result = compensation.resulting_operation
    return {
        "id": compensation.pk,
        "kind": compensation.kind,
        "status": compensation.status,
        "coupon_id": compensation.coupon_id,
        "order_id": compensation.order_id,
        "operation_id": compensation.operation_id,
        "amount": money(compensation.amount),
        "reason": compensation.reason,
        "proposed_by": compensation.created_by,
        "proposed_at": iso(compensation.created_at),
        "decided_by": compensation.decided_by,
        "decided_at": iso(compensation.decided_at),
        "decision_note": compensation.decision_note,
        "resulting_operation": operation_payload(result) if result is not None else None,
    }

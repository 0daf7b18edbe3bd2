"""The ledger row and the outbox row every command writes, one function each."""

from coupons import counters
from coupons.models import CouponOperation, OutboxEvent
from coupons.write.declared import declared_bulk_create, declared_insert
from coupons.write.payloads import iso, money

EVENT_TYPES = {
    "ISSUE": "CouponIssued",
    "LOCK": "CouponLocked",
    "RENEW": "CouponLeaseRenewed",
    "REDEEM": "CouponRedeemed",
    "RELEASE": "CouponReleased",
    "EXPIRE": "CouponExpired",
    "VOID": "CouponVoided",
    "RETURN": "CouponReturned",
    "REVERSE": "CouponOperationReversed",
    "COMPENSATE": "CouponCompensated",
}


def append_operation(*, coupon, op_type, from_state, from_version, ctx, now, **fields):
    """The one writer of ledger rows (the database journals each as it is inserted)."""
    operation = ledger_row(coupon=coupon, op_type=op_type, from_state=from_state,
                           from_version=from_version, ctx=ctx, now=now, **fields)
    declared_insert(operation, actor=operation.actor)
    appended(operation)
    return operation


def appended(operation) -> None:
    """Once the row is written: the command counts on commit."""
    counters.commands_done([operation.op_type])


def ledger_row(*, coupon, op_type, from_state, from_version, ctx, now, **fields):
    """An unsaved ledger row for `coupon`, already moved to its new state."""
    return CouponOperation(
        coupon=coupon,
        op_type=op_type,
        from_state=from_state,
        to_state=coupon.status,
        from_version=from_version,
        to_version=coupon.state_version,
        actor=ctx.actor,
        idempotency_key=ctx.idempotency_key,
        request_hash=ctx.request_hash,
        created_at=now,
        **fields,
    )


def append_operations(operations: list[CouponOperation]) -> list[CouponOperation]:
    """Bulk append_operation for rows of distinct coupons, all by one actor (a scanner's
    batch): one INSERT of the rows. The caller holds every coupon's row lock."""
    counters.commands_done(op.op_type for op in operations)
    actors = {op.actor for op in operations}
    assert len(actors) <= 1, "one batch, one actor"  # the declared actor is the batch's
    return declared_bulk_create(operations, actor=next(iter(actors), ""))


def append_outbox(operation: CouponOperation) -> OutboxEvent:
    event = outbox_row(operation)
    event.save(force_insert=True)
    return event


def append_outboxes(operations: list[CouponOperation]) -> list[OutboxEvent]:
    """Bulk append_outbox, for operations already saved (their ids are in the payload)."""
    return OutboxEvent.objects.bulk_create([outbox_row(op) for op in operations])


def outbox_row(operation: CouponOperation) -> OutboxEvent:
    coupon = operation.coupon
    return OutboxEvent(
        event_type=EVENT_TYPES[operation.op_type],
        coupon=coupon,
        operation=operation,
        payload={
            "coupon_id": coupon.pk,
            "user_id": coupon.user_id,
            "operation_id": operation.pk,
            "from_state": operation.from_state,
            "to_state": operation.to_state,
            "state_version": operation.to_version,
            "order_id": operation.order_id,
            "lock_id": str(operation.lock_id) if operation.lock_id else None,
            "payment_id": operation.payment_id,
            "occurred_at": iso(operation.created_at),
            **_compensation_fields(operation),
        },
        created_at=operation.created_at,
    )


def _compensation_fields(operation: CouponOperation) -> dict:
    """What a reversal or a money compensation adds; other events keep their shape."""
    fields = {}
    if operation.original_operation_id is not None:
        fields["original_operation_id"] = operation.original_operation_id
    if operation.amount is not None:
        fields["amount"] = money(operation.amount)
    return fields

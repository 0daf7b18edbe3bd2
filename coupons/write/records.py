"""The ledger row and the outbox row every command writes, one function each."""

from django.db.models import Q

from coupons import counters
from coupons.evidence.journal import journaled_bulk_create, journaled_insert
from coupons.evidence.ledger_chain import GENESIS, seal
from coupons.models import CouponOperation, OutboxEvent
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
    """The one writer of ledger rows; it links the row into the coupon's hash chain.

    The previous row's hash is usually known: read with the row lock (rows.lock_coupon_row)
    or written by this transaction's previous command on the coupon (`coupon.ledger_head`).
    Otherwise it costs one read by the (coupon, to_version) unique index; ISSUE starts the
    chain and reads nothing. The caller holds the coupon row lock, so no other row can be
    appended meanwhile. A missing previous row (a ledger gap) does not stop the command: the
    per-coupon check reports the gap and the broken chain.
    """
    operation = chained_row(coupon=coupon, op_type=op_type, from_state=from_state,
                            from_version=from_version, ctx=ctx, now=now, **fields)
    journaled_insert(operation)
    appended(coupon, operation)
    return operation


def chained_row(*, coupon, from_version, **fields) -> CouponOperation:
    """The unsaved ledger row, sealed into the coupon's chain (the coupon already moved)."""
    operation = ledger_row(coupon=coupon, from_version=from_version, **fields)
    seal(operation, _previous_hash(coupon, from_version) or GENESIS)
    return operation


def appended(coupon, operation) -> None:
    """Once the row is written: the next row links to it, and the command counts on commit."""
    coupon.ledger_head = (operation.to_version, operation.content_hash)
    counters.commands_done([operation.op_type])


def _previous_hash(coupon, from_version) -> str | None:
    if from_version == 0:
        return GENESIS
    known_version, known_hash = getattr(coupon, "ledger_head", (None, None))
    if known_version == from_version:
        return known_hash
    return (CouponOperation.objects.filter(coupon=coupon, to_version=from_version)
            .values_list("content_hash", flat=True).first())


def ledger_row(*, coupon, op_type, from_state, from_version, ctx, now, **fields):
    """An unsaved, unsealed ledger row for `coupon`, already moved to its new state."""
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
    """Bulk append_operation for rows of distinct coupons: one read of the previous rows'
    hashes, each row sealed into its coupon's chain exactly as append_operation does, one
    INSERT. The caller holds every coupon's row lock."""
    wanted = Q()
    for op in operations:
        wanted |= Q(coupon_id=op.coupon_id, to_version=op.from_version)
    previous = {
        (coupon_id, version): content_hash
        for coupon_id, version, content_hash in CouponOperation.objects.filter(wanted)
        .values_list("coupon_id", "to_version", "content_hash")
    } if operations else {}
    for op in operations:
        seal(op, GENESIS if op.from_version == 0
             else previous.get((op.coupon_id, op.from_version), GENESIS))
    counters.commands_done(op.op_type for op in operations)
    return journaled_bulk_create(operations)


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

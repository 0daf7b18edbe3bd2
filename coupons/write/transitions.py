"""The state machine as data, the one guard, and the one compare-and-set write."""

from coupons.errors import InvalidState, VersionConflict
from coupons.models import CouponStatus as S
from coupons.models import OperationType as Op
from coupons.models import UserCoupon
from coupons.refusal_messages import refusal_message
from coupons.write import one_statement
from coupons.write.context import answer_record_id
from coupons.write.idempotency import answer_seal
from coupons.write.records import appended, ledger_row, outbox_row

# op → {from state → allowed to states}.
TRANSITIONS = {
    Op.LOCK: {S.AVAILABLE: {S.LOCKED}},
    Op.RENEW: {S.LOCKED: {S.LOCKED}},
    Op.REDEEM: {S.LOCKED: {S.USED}},
    Op.RELEASE: {S.LOCKED: {S.AVAILABLE, S.EXPIRED}},
    Op.EXPIRE: {S.AVAILABLE: {S.EXPIRED}},
    Op.VOID: {S.AVAILABLE: {S.VOID}, S.LOCKED: {S.VOID}, S.USED: {S.VOID}},
    Op.RETURN: {S.USED: {S.AVAILABLE, S.EXPIRED}},
    # Back to the state before the reversed REDEEM, VOID, EXPIRE or RETURN
    # (coupons.services.reversals); never from or to LOCKED: a lease is never restored.
    Op.REVERSE: {
        S.USED: {S.AVAILABLE, S.EXPIRED},
        S.VOID: {S.AVAILABLE, S.EXPIRED, S.USED},
        S.EXPIRED: {S.AVAILABLE, S.USED},
        S.AVAILABLE: {S.USED},
    },
    # Money owed: a recorded step that changes no state. Never on a LOCKED coupon, whose
    # lease holder must keep the version it was given.
    Op.COMPENSATE: {state: {state} for state in (S.AVAILABLE, S.USED, S.EXPIRED, S.VOID)},
}

# Fields that must be cleared whenever a coupon leaves LOCKED.
UNBOUND = {
    "current_lock": None,
    "locked_order_id": None,
    "lock_token_hash": None,
    "lock_expires_at": None,
}


def state_moves() -> set[tuple[str, str]]:
    """Every (from, to) some operation allows: what the database's `coupons_state_moves()`
    holds (coupons/models/state_moves.py)."""
    return {(from_state, to_state) for by_state in TRANSITIONS.values()
            for from_state, to_states in by_state.items() for to_state in to_states}


def is_allowed(op_type: str, from_state: str, to_state: str) -> bool:
    return to_state in TRANSITIONS.get(op_type, {}).get(from_state, set())


def guard_batch(op_type: str, moves) -> None:
    """The set-based commands' guard (coupons/services/bulk_*.py): every (from, to) pair their
    one UPDATE writes must be a move of TRANSITIONS for `op_type`, checked before it runs, so a
    batch can make no move a one-coupon command could not."""
    for from_state, to_state in set(moves):
        if not is_allowed(op_type, from_state, to_state):
            raise InvalidState(
                refusal_message("not_allowed_from", op=op_type, state=from_state),
                operation=op_type, to_state=to_state,
            )


def guard(op_type: str, coupon: UserCoupon) -> None:
    if coupon.status not in TRANSITIONS[op_type]:
        raise InvalidState(
            refusal_message("not_allowed_from", op=op_type, state=coupon.status),
            coupon=coupon, operation=op_type,
        )


def is_past_validity(coupon: UserCoupon, now) -> bool:
    return coupon.valid_until is not None and now >= coupon.valid_until


def _sealed_answer(ctx, record_id, body, answer_ids) -> tuple:
    """one_statement's answer: the row ids it fills in are named by the seal, not covered."""
    seal = answer_seal(ctx, status=ctx.success_status, body=body, filled=tuple(answer_ids))
    return record_id, ctx.success_status, body, answer_ids, seal


def apply_transition(
    *, coupon, op_type, to_state, expected_version, ctx, now,
    owner=None, changes=None, rows=(), updates=(), answer=None, answer_ids=None,
    **ledger_fields,
):
    """Compare-and-set the coupon, write the command's rows, its ledger and outbox rows and,
    with `answer`, its stored answer.

    The caller holds the row lock, so the CAS cannot lose; it is the last line of defence for
    any path that forgot the lock. `owner` is (order_id, token_hash) for lock-bound commands.
    `rows` are the command's new rows (unsaved), `updates` (model, pk, values) triples, `answer`
    a function giving the answer's body, built before the rows are written: `answer_ids`
    names its keys that take a new row's id.

    All of it is one statement (coupons.write.one_statement), so a missed CAS writes nothing.
    """
    if not is_allowed(op_type, coupon.status, to_state):
        raise InvalidState(refusal_message("cannot_go", op=op_type, from_state=coupon.status,
                                           to_state=to_state), coupon=coupon)
    where = {"pk": coupon.pk, "status": coupon.status, "state_version": expected_version}
    if owner is not None:
        where["locked_order_id"], where["lock_token_hash"] = owner
    values = {"status": to_state, "state_version": expected_version + 1, "updated_at": now,
              **(changes or {})}
    from_state = coupon.status
    record_id = answer_record_id(ctx) if answer is not None else None
    for field, value in values.items():
        setattr(coupon, field, value)
    operation = ledger_row(coupon=coupon, op_type=op_type, from_state=from_state,
                           from_version=expected_version, ctx=ctx, now=now, **ledger_fields)
    event = outbox_row(operation)
    ids = one_statement.write(
        cas=(where, values), rows=rows, updates=updates, operation=operation, event=event,
        answer=None if record_id is None
        else _sealed_answer(ctx, record_id, answer(), answer_ids or {}),
    )
    if ids is None:
        coupon.refresh_from_db()
        raise VersionConflict(coupon=coupon)
    operation.pk, event.pk = ids[:2]
    for row, row_id in zip(rows, ids[2:], strict=True):
        row.pk = row_id
    appended(operation)
    if record_id is not None:
        ctx.answered_records.add(record_id)
    return operation

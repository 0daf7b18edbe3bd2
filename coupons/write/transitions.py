"""The state machine as data, the one guard, and the one compare-and-set write."""

from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection

from coupons.errors import InvalidState, VersionConflict
from coupons.models import CouponStatus as S
from coupons.models import OperationType as Op
from coupons.models import UserCoupon
from coupons.refusal_messages import refusal_message
from coupons.sql import transitions as sql
from coupons.write.context import CommandContext
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


@dataclass(frozen=True)
class Command:
    """What one command writes besides the coupon's state and version.

    `owner` is (order id, token hash) for a lease-bound command: the compare-and-set matches
    only a coupon still leased to them. `changes` are the coupon's other columns it moves (a
    lease's four); `new_lease` a LOCK's unsaved (lease, order link); `redemption` a REDEEM's
    unsaved row; `lease_changes` what it changes on the coupon's current lease (renewed or
    ended); `ledger` the ledger row's other columns (order, lease, payment, reason, ...).
    """

    op_type: str
    ctx: CommandContext
    now: datetime
    owner: tuple[str, str] | None = None
    changes: dict = field(default_factory=dict)
    new_lease: tuple = ()
    redemption: object = None
    lease_changes: dict | None = None
    ledger: dict = field(default_factory=dict)


def apply_transition(coupon, command: Command, to_state: str, expected_version: int):
    """Move `coupon` (as its row lock read it) to `to_state` with `command`, in one statement:
    the compare-and-set on state, version and owner, the command's rows, its ledger row and
    the ledger row's outbox event (coupons/sql/transitions.py). The ledger row, with its id.

    The caller holds the row lock, so the compare-and-set cannot lose; it is the last line of
    defence for any path that forgot the lock. A compare-and-set that misses writes nothing.
    """
    op_type, from_state = command.op_type, coupon.status
    if not is_allowed(op_type, from_state, to_state):
        raise InvalidState(refusal_message("cannot_go", op=op_type, from_state=from_state,
                                           to_state=to_state), coupon=coupon)
    lease = coupon.current_lock if command.lease_changes is not None else None  # before changes
    for name, value in {"status": to_state, "state_version": expected_version + 1,
                        "updated_at": command.now, **command.changes}.items():
        setattr(coupon, name, value)
    operation = ledger_row(coupon=coupon, op_type=op_type, from_state=from_state,
                           from_version=expected_version, ctx=command.ctx, now=command.now,
                           **command.ledger)
    event = outbox_row(operation)
    params = [command.ctx.actor,  # sql.DECLARED's
              *sql.compare_and_set_params(coupon, from_state=from_state,
                                          expected_version=expected_version,
                                          owner=command.owner)]
    rows, new_rows = _command_rows(command, lease, params)
    params += [*sql.ledger_params(operation), *sql.outbox_params(event)]
    with connection.numbered_cursor() as cursor:
        cursor.execute(sql.statement(rows), params)
        ids = cursor.fetchone()
    if ids[0] is None:
        coupon.refresh_from_db()
        raise VersionConflict(coupon=coupon)
    operation.pk, event.pk = ids[:2]
    for row, row_id in zip(new_rows, ids[2:], strict=True):
        row.pk = row_id
    appended(operation)
    return operation


def _command_rows(command: Command, lease, params: list) -> tuple[tuple, list]:
    """The statement's parts for the command's own rows, their parameters added to `params`,
    and the new rows in the order their ids come back."""
    rows, new_rows = [], []
    if command.new_lease:
        new_lease, order_link = command.new_lease
        rows += [sql.NEW_LEASE, sql.NEW_ORDER_LINK]
        params += [*sql.lease_params(new_lease), *sql.order_link_params(order_link)]
        new_rows += [new_lease, order_link]
    if command.redemption is not None:
        rows.append(sql.NEW_REDEMPTION)
        params += sql.redemption_params(command.redemption)
        new_rows.append(command.redemption)
    if command.lease_changes is not None:
        for name, value in command.lease_changes.items():
            setattr(lease, name, value)
        rows.append(sql.LEASE_MOVED)
        params += sql.lease_moved_params(lease)
    return tuple(rows), new_rows

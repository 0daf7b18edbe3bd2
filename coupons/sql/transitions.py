"""A command's one write: the compare-and-set, its rows, its ledger row and its outbox row.

Why not the ORM: the ORM sends one statement per row, so a command would spend five to seven
round trips on its writes, and nothing in it makes the later writes depend on the
compare-and-set having matched. One data-modifying WITH does both: every insert selects FROM
the compare-and-set's RETURNING and every update asks EXISTS of it, so a compare-and-set that
matched no row writes nothing at all. The first item declares the journal's actor
(coupons/evidence/journal_sql.py), which the compare-and-set reads, so it is set before any
journaled row is written. Row triggers and foreign keys act on each row as for separate
statements (the keys are checked at the end of the statement, when every row is in).

A command's statement is the constants below, joined in a fixed order (`statement`): which
ones depends only on the command (LOCK inserts a lease and an order link, REDEEM a redemption,
lease-bound commands move their lease), so each command has one text, which psycopg prepares
once per connection. The `*_params` functions bind a row's values in its statement's order.
"""

import json
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Part:
    """One WITH item, `name`; `new_row`: an INSERT whose id the statement returns."""

    name: str
    sql: str
    new_row: bool = False


DECLARED = Part("declared",
                "declared AS (SELECT set_config('coupons.actor', %s, true) IS NOT NULL AS done)")
"""The actor the database's journal triggers write into each entry. Parameter: the actor."""

COMPARE_AND_SET = Part("cas", """
    cas AS (
        UPDATE coupons_usercoupon
           SET status = %s, state_version = %s, updated_at = %s, current_lock_id = %s,
               locked_order_id = %s, lock_token_hash = %s, lock_expires_at = %s
         WHERE id = %s AND status = %s AND state_version = %s
           AND (%s OR (locked_order_id = %s AND lock_token_hash = %s))
           AND (SELECT done FROM declared)
        RETURNING 1
    )""")
"""The coupon moved, if it still has the state and version the command read and, for a
lease-bound command, is still leased to the caller's order under the caller's token. It
writes every column a transition may move (the lease's four), from the row the command
changed. Parameters: compare_and_set_params."""

NEW_LEASE = Part("lease", """
    lease AS (
        INSERT INTO coupons_couponlock (id, coupon_id, order_id, token_hash, token_key_id,
                                        status, locked_at, expires_at, acquired_version,
                                        ended_at, client_id)
        SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM cas
        RETURNING id
    )""", new_row=True)
"""A LOCK's lease (its id is the command's own UUID). Parameters: lease_params."""

NEW_ORDER_LINK = Part("order_link", """
    order_link AS (
        INSERT INTO coupons_ordercoupon (lock_id, coupon_id, order_id, quote_id, order_amount,
                                         discount_amount, template_version_id, created_at)
        SELECT %s, %s, %s, %s, %s, %s, %s, %s FROM cas
        RETURNING id
    )""", new_row=True)
"""A LOCK's frozen order terms. Parameters: order_link_params."""

NEW_REDEMPTION = Part("redemption", """
    redemption AS (
        INSERT INTO coupons_redemption (coupon_id, lock_id, order_id, payment_id,
                                        discount_amount, succeeded, created_at)
        SELECT %s, %s, %s, %s, %s, %s, %s FROM cas
        RETURNING id
    )""", new_row=True)
"""A REDEEM's redemption. Parameters: redemption_params."""

LEASE_MOVED = Part("lease_moved", """
    lease_moved AS (
        UPDATE coupons_couponlock SET status = %s, expires_at = %s, ended_at = %s
         WHERE id = %s AND EXISTS (SELECT 1 FROM cas)
    )""")
"""The current lease renewed or ended, written from the lease the command changed.
Parameters: lease_moved_params."""

LEDGER = Part("ledger", """
    ledger AS (
        INSERT INTO coupons_couponoperation (
            coupon_id, op_type, from_state, to_state, from_version, to_version, actor,
            order_id, lock_id, payment_id, refund_id, idempotency_key, request_hash,
            original_operation_id, reason, reason_code, reason_params, amount, created_at)
        SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
               CAST(%s AS jsonb), %s, %s FROM cas
        RETURNING id
    )""")
"""The command's ledger row. Parameters: ledger_params."""

OUTBOX = Part("outbox", """
    outbox AS (
        INSERT INTO coupons_outboxevent (event_type, coupon_id, operation_id, payload,
                                         created_at)
        SELECT %s, %s, ledger.id,
               CAST(%s AS jsonb) || jsonb_build_object('operation_id', ledger.id), %s
          FROM ledger
        RETURNING id
    )""")
"""The ledger row's event, which names the ledger row's id (known only here) in its column and
its payload. Parameters: outbox_params."""


@cache
def statement(rows: tuple[Part, ...]) -> str:
    """The WITH of a command writing `rows` (NEW_* and LEASE_MOVED, in the order given), which
    answers the ids of the ledger row, the outbox row and each new row (None if the
    compare-and-set missed)."""
    parts = (DECLARED, COMPARE_AND_SET, *rows, LEDGER, OUTBOX)
    names = ["ledger", "outbox", *(part.name for part in rows if part.new_row)]
    returned = ", ".join(f"(SELECT id FROM {name})" for name in names)
    return f"WITH {', '.join(part.sql for part in parts)} SELECT {returned}"


def compare_and_set_params(coupon, *, from_state, expected_version, owner) -> list:
    """`coupon` as the command changed it; `owner` (order id, token hash) or None."""
    order_id, token_hash = owner or (None, None)
    return [coupon.status, coupon.state_version, coupon.updated_at, coupon.current_lock_id,
            coupon.locked_order_id, coupon.lock_token_hash, coupon.lock_expires_at,
            coupon.pk, from_state, expected_version, owner is None, order_id, token_hash]


def lease_params(lock) -> list:
    return [lock.pk, lock.coupon_id, lock.order_id, lock.token_hash, lock.token_key_id,
            lock.status, lock.locked_at, lock.expires_at, lock.acquired_version,
            lock.ended_at, lock.client_id]


def order_link_params(link) -> list:
    return [link.lock_id, link.coupon_id, link.order_id, link.quote_id, link.order_amount,
            link.discount_amount, link.template_version_id, link.created_at]


def redemption_params(redemption) -> list:
    return [redemption.coupon_id, redemption.lock_id, redemption.order_id,
            redemption.payment_id, redemption.discount_amount, redemption.succeeded,
            redemption.created_at]


def lease_moved_params(lock) -> list:
    return [lock.status, lock.expires_at, lock.ended_at, lock.pk]


def ledger_params(operation) -> list:
    return [operation.coupon_id, operation.op_type, operation.from_state, operation.to_state,
            operation.from_version, operation.to_version, operation.actor, operation.order_id,
            operation.lock_id, operation.payment_id, operation.refund_id,
            operation.idempotency_key, operation.request_hash,
            operation.original_operation_id, operation.reason, operation.reason_code,
            as_json(operation.reason_params), operation.amount, operation.created_at]


def outbox_params(event) -> list:
    return [event.event_type, event.coupon_id, as_json(event.payload), event.created_at]


def as_json(value) -> str | None:
    """A JSON column's parameter: SQL NULL for None, as the ORM writes a nullable JSONField."""
    return None if value is None else json.dumps(value)

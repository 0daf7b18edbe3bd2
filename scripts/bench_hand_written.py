"""The hand-written LOCK + REDEEM cycle of scripts/bench_commands.py: psycopg and SQL, no Django.

It mirrors what the application's command sends (coupons.write: rows.lock_coupon_row, then
one_statement.write), so its figures are the ceiling of that design with no Python in the way:
BEGIN; one statement that claims the Idempotency-Key and locks the coupon row, reading what
the command needs (its terms; for REDEEM the lease, the order link and whether refunds wait
for the redemption); one data-modifying WITH that writes the compare-and-set, the command's
rows (LOCK: the lease and the order link; REDEEM: the redemption and the lease's end), the
ledger row, a journal entry for each evidence row (order link, redemption, ledger row), the
outbox row and the stored answer; COMMIT.

Not written here: the application's twin handling (ON CONFLICT, its lock_timeout), its re-read
after a row lock that waited, and the checks of the lease token's owner beyond the
compare-and-set: no twin and no contention on a coupon exist in the benchmark.
"""

import hashlib
import hmac
import json
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal

ORDER_AMOUNT = Decimal("300.00")
LEASE = timedelta(minutes=15)
ACTOR = "bench"

CLAIM = """claim AS (INSERT INTO coupons_idempotencyrecord (scope, "key", request_hash, status,
                                                           claimed_at)
                     VALUES ('bench', %(key)s, %(key)s, 'IN_PROGRESS', %(now)s) RETURNING id)"""
CLAIM_AND_LOCK = f"""WITH {CLAIM}
    SELECT claim.id, c.status, c.state_version, c.user_id, c.template_version_id,
           v.face_value, v.min_order_amount
      FROM claim, coupons_usercoupon c
      JOIN coupons_coupontemplateversion v ON v.id = c.template_version_id
     WHERE c.id = %(coupon)s FOR NO KEY UPDATE OF c"""
CLAIM_AND_LOCK_LEASED = f"""WITH {CLAIM}
    SELECT claim.id, c.status, c.state_version, c.user_id, c.locked_order_id,
           c.lock_token_hash, l.id, oc.discount_amount,
           EXISTS (SELECT 1 FROM refunds_refundcoupon r WHERE r.coupon_id = c.id
                      AND r.order_id = c.locked_order_id AND r.status = 'AWAITING_REDEMPTION')
      FROM claim, coupons_usercoupon c
      JOIN coupons_couponlock l ON l.id = c.current_lock_id
      JOIN coupons_ordercoupon oc ON oc.lock_id = l.id
     WHERE c.id = %(coupon)s FOR NO KEY UPDATE OF c"""


def entry(name: str, source: str, subject: str) -> str:
    """The journal entry of the row `source` returns, as coupons.evidence.journal writes it:
    its content is `{"id":<id>,` and the rest, its hash computed by the database."""
    return f"""{name} AS (INSERT INTO coupons_journalentry (subject, subject_id, kind, actor,
                          parent_hash, content, content_hash, created_at)
        SELECT '{subject}', s.id, 'recorded', '{ACTOR}', NULL, e.content,
               encode(sha256(convert_to(e.content, 'UTF8')), 'hex'), %(now)s
          FROM {source} s CROSS JOIN LATERAL
               (SELECT '{{"id":' || s.id || ',' || %({name})s AS content) e)"""


LEDGER = """ledger AS (INSERT INTO coupons_couponoperation (coupon_id, op_type, from_state,
        to_state, from_version, to_version, actor, order_id, lock_id, payment_id, refund_id,
        idempotency_key, request_hash, reason, reason_code, created_at)
    SELECT %(coupon)s, %(op)s, %(from_state)s, %(to_state)s, %(version)s, %(version)s + 1,
           'bench', %(order)s, %(lock)s, %(payment)s, '', %(key)s, %(key)s, '', '', %(now)s
      FROM cas RETURNING id)"""
OUTBOX = """outbox AS (INSERT INTO coupons_outboxevent (event_type, coupon_id, operation_id,
                                                     payload, created_at)
    SELECT %(event)s, %(coupon)s, ledger.id,
           %(payload)s::jsonb || jsonb_build_object('operation_id', ledger.id), %(now)s
      FROM ledger RETURNING id)"""
ANSWER = """answer AS (UPDATE coupons_idempotencyrecord SET status = 'COMPLETED',
           response_status = 200, response_body = %(answer)s::jsonb{extra}, completed_at = %(now)s
     WHERE id = %(claim)s AND status = 'IN_PROGRESS' AND EXISTS (SELECT 1 FROM cas))"""

LOCK_WRITE = ", ".join([
    """WITH cas AS (UPDATE coupons_usercoupon SET status = 'LOCKED',
           state_version = %(version)s + 1, updated_at = %(now)s, current_lock_id = %(lock)s,
           locked_order_id = %(order)s, lock_token_hash = %(token_hash)s,
           lock_expires_at = %(expires)s
     WHERE id = %(coupon)s AND status = 'AVAILABLE' AND state_version = %(version)s
     RETURNING 1)""",
    """lease AS (INSERT INTO coupons_couponlock (id, coupon_id, order_id, token_hash,
           token_key_id, status, locked_at, expires_at, acquired_version)
    SELECT %(lock)s, %(coupon)s, %(order)s, %(token_hash)s, 'k1', 'ACTIVE', %(now)s,
           %(expires)s, %(version)s + 1 FROM cas RETURNING id)""",
    """link AS (INSERT INTO coupons_ordercoupon (lock_id, coupon_id, order_id, quote_id,
           order_amount, discount_amount, template_version_id, created_at)
    SELECT %(lock)s, %(coupon)s, %(order)s, '', %(amount)s, %(discount)s, %(terms)s, %(now)s
      FROM cas RETURNING id)""",
    entry("link_entry", "link", "coupons.ordercoupon"),
    LEDGER, entry("ledger_entry", "ledger", "coupons.couponoperation"), OUTBOX,
    ANSWER.format(extra=""),
]) + " SELECT (SELECT id FROM ledger)"

REDEEM_WRITE = ", ".join([
    """WITH cas AS (UPDATE coupons_usercoupon SET status = 'USED',
           state_version = %(version)s + 1, updated_at = %(now)s, current_lock_id = NULL,
           locked_order_id = NULL, lock_token_hash = NULL, lock_expires_at = NULL
     WHERE id = %(coupon)s AND status = 'LOCKED' AND state_version = %(version)s
       AND locked_order_id = %(order)s AND lock_token_hash = %(token_hash)s RETURNING 1)""",
    """redemption AS (INSERT INTO coupons_redemption (coupon_id, lock_id, order_id, payment_id,
           discount_amount, succeeded, created_at)
    SELECT %(coupon)s, %(lock)s, %(order)s, %(payment)s, %(discount)s, true, %(now)s
      FROM cas RETURNING id)""",
    entry("redemption_entry", "redemption", "coupons.redemption"),
    """lease_end AS (UPDATE coupons_couponlock SET status = 'CONSUMED', ended_at = %(now)s
     WHERE id = %(lock)s AND EXISTS (SELECT 1 FROM cas))""",
    LEDGER, entry("ledger_entry", "ledger", "coupons.couponoperation"), OUTBOX,
    ANSWER.format(extra=" || jsonb_build_object('redemption_id', "
                        "(SELECT id FROM redemption))"),
]) + " SELECT (SELECT id FROM ledger)"


def rest(row: dict, at: str, table: str) -> str:
    """A journal entry's content after its `{"id":<id>,`: canonical JSON, keys sorted, as
    coupons.evidence.journal writes it."""
    return json.dumps({"actor": ACTOR, "at": at, "kind": "recorded", "parent": None,
                       "row": row, "table": table}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)[1:]


def ledger_facts(p: dict, op: str, states: tuple[str, str]) -> dict:
    return {"actor": ACTOR, "amount": None, "coupon_id": p["coupon"], "created_at": p["at"],
            "from_state": states[0], "from_version": p["version"], "idempotency_key": p["key"],
            "lock_id": str(p["lock"]), "op_type": op, "order_id": p["order"],
            "original_operation_id": None, "payment_id": p["payment"], "reason": "",
            "reason_code": "", "reason_params": None, "refund_id": "",
            "request_hash": p["key"], "to_state": states[1], "to_version": p["version"] + 1}


def payload(p: dict, states: tuple[str, str], user_id: str) -> str:
    return json.dumps({"coupon_id": p["coupon"], "user_id": user_id, "operation_id": None,
                       "from_state": states[0], "to_state": states[1],
                       "state_version": p["version"] + 1, "order_id": p["order"],
                       "lock_id": str(p["lock"]), "payment_id": p["payment"],
                       "occurred_at": p["at"]})


def _now() -> tuple[datetime, str]:
    now = datetime.now(UTC)
    return now, now.isoformat(timespec="microseconds")


def raw_lock(conn, coupon_id: int, secret: str) -> str:
    """One LOCK, one transaction; answers the lease token."""
    now, at = _now()
    p = {"coupon": coupon_id, "key": uuid.uuid4().hex, "now": now, "at": at,
         "order": f"raw-{coupon_id}", "payment": "", "lock": uuid.uuid4()}
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(CLAIM_AND_LOCK, p)
        p["claim"], status, p["version"], user_id, p["terms"], face, minimum = cur.fetchone()
        assert status == "AVAILABLE" and minimum <= ORDER_AMOUNT
        token = hmac.new(secret.encode(), str(p["lock"]).encode(), hashlib.sha256).hexdigest()
        p["token_hash"] = hashlib.sha256(token.encode()).hexdigest()
        p.update(expires=now + LEASE, amount=ORDER_AMOUNT, discount=min(face, ORDER_AMOUNT))
        states = ("AVAILABLE", "LOCKED")
        p["link_entry"] = rest({"coupon_id": coupon_id, "created_at": at,
                                "discount_amount": f"{p['discount']:.2f}",
                                "lock_id": str(p["lock"]), "order_amount": f"{ORDER_AMOUNT:.2f}",
                                "order_id": p["order"], "quote_id": "",
                                "template_version_id": p["terms"]}, at, "coupons.ordercoupon")
        p["ledger_entry"] = rest(ledger_facts(p, "LOCK", states), at, "coupons.couponoperation")
        p.update(op="LOCK", from_state=states[0], to_state=states[1], event="CouponLocked",
                 payload=payload(p, states, user_id))
        p["answer"] = json.dumps({"coupon_id": coupon_id, "lock_id": str(p["lock"]),
                                  "order_id": p["order"], "state_version": p["version"] + 1,
                                  "expires_at": p["expires"].isoformat(), "status": "LOCKED",
                                  "discount_amount": f"{p['discount']:.2f}"})
        cur.execute(LOCK_WRITE, p)
        assert cur.fetchone()[0] is not None  # the compare-and-set hit
    return token


def raw_redeem(conn, coupon_id: int, token: str) -> None:
    """One REDEEM of the lease `token` holds, one transaction."""
    now, at = _now()
    p = {"coupon": coupon_id, "key": uuid.uuid4().hex, "now": now, "at": at,
         "payment": f"pay-{coupon_id}"}
    token_hash = hashlib.sha256(token.encode()).hexdigest()
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(CLAIM_AND_LOCK_LEASED, p)
        (p["claim"], status, p["version"], user_id, p["order"], stored_hash, p["lock"],
         p["discount"], _refunds_waiting) = cur.fetchone()
        assert status == "LOCKED" and hmac.compare_digest(stored_hash, token_hash)
        p["token_hash"] = token_hash
        states = ("LOCKED", "USED")
        p["redemption_entry"] = rest({"coupon_id": coupon_id, "created_at": at,
                                      "discount_amount": f"{p['discount']:.2f}",
                                      "lock_id": str(p["lock"]), "order_id": p["order"],
                                      "payment_id": p["payment"], "succeeded": True}, at,
                                     "coupons.redemption")
        p["ledger_entry"] = rest(ledger_facts(p, "REDEEM", states), at,
                                 "coupons.couponoperation")
        p.update(op="REDEEM", from_state=states[0], to_state=states[1], event="CouponRedeemed",
                 payload=payload(p, states, user_id))
        p["answer"] = json.dumps({"coupon_id": coupon_id, "order_id": p["order"],
                                  "payment_id": p["payment"],
                                  "discount_amount": f"{p['discount']:.2f}",
                                  "state_version": p["version"] + 1, "status": "USED",
                                  "already_redeemed": False})
        cur.execute(REDEEM_WRITE, p)
        assert cur.fetchone()[0] is not None


def hand_written_client(coupon_ids, deadline, database_url, secret):
    """One client's loop (scripts/bench_commands.py runs it in a process of its own)."""
    import time

    import psycopg

    latencies = []
    with psycopg.connect(database_url) as conn:
        for coupon_id in coupon_ids:
            if time.monotonic() >= deadline:
                break
            started = time.monotonic()
            token = raw_lock(conn, coupon_id, secret)
            locked = time.monotonic()
            raw_redeem(conn, coupon_id, token)
            latencies += [locked - started, time.monotonic() - locked]
    return latencies

"""The hand-written LOCK + REDEEM cycle of scripts/benchmarks/bench_commands.py: psycopg and SQL,
no Django.

It mirrors what the application's command sends (coupons/sql/: claims.CLAIMED_AND_LOCKED,
then transitions.statement, though the application stores the answer in a third statement),
so its figures are the ceiling of that design with no Python in the way:
BEGIN; one statement that claims the Idempotency-Key and locks the coupon row, reading what
the command needs (its terms; for REDEEM the lease, the order link and whether refunds wait
for the redemption); one data-modifying WITH that writes the compare-and-set, the command's
rows (LOCK: the lease and the order link; REDEEM: the redemption and the lease's end), the
ledger row, the outbox row and the stored answer; COMMIT. The journal entries of the evidence
rows (order link, redemption, ledger row) are the database's own, written by its triggers from
the rows under the actor the statement declares; the Idempotency-Key record is sealed with an
HMAC, as the application seals it.

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
                                                           claimed_at, seal)
                     VALUES ('bench', %(key)s, %(key)s, 'IN_PROGRESS', %(now)s, %(claim_seal)s)
                     RETURNING id)"""
SEAL_KEY = b"bench-seal-key"
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
           response_status = 200, response_body = %(answer)s::jsonb{extra}, completed_at = %(now)s,
           seal = %(answer_seal)s
     WHERE id = %(claim)s AND status = 'IN_PROGRESS' AND EXISTS (SELECT 1 FROM cas))"""

LOCK_WRITE = ", ".join([
    """WITH cas AS (UPDATE coupons_usercoupon SET status = 'LOCKED',
           state_version = %(version)s + 1, updated_at = %(now)s, current_lock_id = %(lock)s,
           locked_order_id = %(order)s, lock_token_hash = %(token_hash)s,
           lock_expires_at = %(expires)s
     WHERE id = %(coupon)s AND status = 'AVAILABLE' AND state_version = %(version)s
       AND set_config('coupons.actor', 'bench', true) IS NOT NULL RETURNING 1)""",
    """lease AS (INSERT INTO coupons_couponlock (id, coupon_id, order_id, token_hash,
           token_key_id, status, locked_at, expires_at, acquired_version)
    SELECT %(lock)s, %(coupon)s, %(order)s, %(token_hash)s, 'k1', 'ACTIVE', %(now)s,
           %(expires)s, %(version)s + 1 FROM cas RETURNING id)""",
    """link AS (INSERT INTO coupons_ordercoupon (lock_id, coupon_id, order_id, quote_id,
           order_amount, discount_amount, template_version_id, created_at)
    SELECT %(lock)s, %(coupon)s, %(order)s, '', %(amount)s, %(discount)s, %(terms)s, %(now)s
      FROM cas RETURNING id)""",
    LEDGER, OUTBOX,
    ANSWER.format(extra=""),
]) + " SELECT (SELECT id FROM ledger)"

REDEEM_WRITE = ", ".join([
    """WITH cas AS (UPDATE coupons_usercoupon SET status = 'USED',
           state_version = %(version)s + 1, updated_at = %(now)s, current_lock_id = NULL,
           locked_order_id = NULL, lock_token_hash = NULL, lock_expires_at = NULL
     WHERE id = %(coupon)s AND status = 'LOCKED' AND state_version = %(version)s
       AND locked_order_id = %(order)s AND lock_token_hash = %(token_hash)s
       AND set_config('coupons.actor', 'bench', true) IS NOT NULL RETURNING 1)""",
    """redemption AS (INSERT INTO coupons_redemption (coupon_id, lock_id, order_id, payment_id,
           discount_amount, succeeded, created_at)
    SELECT %(coupon)s, %(lock)s, %(order)s, %(payment)s, %(discount)s, true, %(now)s
      FROM cas RETURNING id)""",
    """lease_end AS (UPDATE coupons_couponlock SET status = 'CONSUMED', ended_at = %(now)s
     WHERE id = %(lock)s AND EXISTS (SELECT 1 FROM cas))""",
    LEDGER, OUTBOX,
    ANSWER.format(extra=" || jsonb_build_object('redemption_id', "
                        "(SELECT id FROM redemption))"),
]) + " SELECT (SELECT id FROM ledger)"


def seal(*parts) -> str:
    """An HMAC over the record's parts, as coupons.write.idempotency_seal computes one."""
    message = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return ":" + hmac.new(SEAL_KEY, message.encode(), hashlib.sha256).hexdigest()


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
    p["claim_seal"] = seal("record", "bench", p["key"], p["key"], "IN_PROGRESS", None, None, "")
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(CLAIM_AND_LOCK, p)
        p["claim"], status, p["version"], user_id, p["terms"], face, minimum = cur.fetchone()
        assert status == "AVAILABLE" and minimum <= ORDER_AMOUNT
        token = hmac.new(secret.encode(), str(p["lock"]).encode(), hashlib.sha256).hexdigest()
        p["token_hash"] = hashlib.sha256(token.encode()).hexdigest()
        p.update(expires=now + LEASE, amount=ORDER_AMOUNT, discount=min(face, ORDER_AMOUNT))
        states = ("AVAILABLE", "LOCKED")
        p.update(op="LOCK", from_state=states[0], to_state=states[1], event="CouponLocked",
                 payload=payload(p, states, user_id))
        p["answer"] = json.dumps({"coupon_id": coupon_id, "lock_id": str(p["lock"]),
                                  "order_id": p["order"], "state_version": p["version"] + 1,
                                  "expires_at": p["expires"].isoformat(), "status": "LOCKED",
                                  "discount_amount": f"{p['discount']:.2f}"})
        p["answer_seal"] = seal("record", "bench", p["key"], p["key"], "COMPLETED", 200,
                                p["answer"], "")
        cur.execute(LOCK_WRITE, p)
        assert cur.fetchone()[0] is not None  # the compare-and-set hit
    return token


def raw_redeem(conn, coupon_id: int, token: str) -> None:
    """One REDEEM of the lease `token` holds, one transaction."""
    now, at = _now()
    p = {"coupon": coupon_id, "key": uuid.uuid4().hex, "now": now, "at": at,
         "payment": f"pay-{coupon_id}"}
    p["claim_seal"] = seal("record", "bench", p["key"], p["key"], "IN_PROGRESS", None, None, "")
    token_hash = hashlib.sha256(token.encode()).hexdigest()
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(CLAIM_AND_LOCK_LEASED, p)
        (p["claim"], status, p["version"], user_id, p["order"], stored_hash, p["lock"],
         p["discount"], _refunds_waiting) = cur.fetchone()
        assert status == "LOCKED" and hmac.compare_digest(stored_hash, token_hash)
        p["token_hash"] = token_hash
        states = ("LOCKED", "USED")
        p.update(op="REDEEM", from_state=states[0], to_state=states[1], event="CouponRedeemed",
                 payload=payload(p, states, user_id))
        p["answer"] = json.dumps({"coupon_id": coupon_id, "order_id": p["order"],
                                  "payment_id": p["payment"],
                                  "discount_amount": f"{p['discount']:.2f}",
                                  "state_version": p["version"] + 1, "status": "USED",
                                  "already_redeemed": False})
        p["answer_seal"] = seal("record", "bench", p["key"], p["key"], "COMPLETED", 200,
                                p["answer"], "redemption_id")
        cur.execute(REDEEM_WRITE, p)
        assert cur.fetchone()[0] is not None


def hand_written_client(coupon_ids, deadline, database_url, secret):
    """One client's loop (scripts/benchmarks/bench_commands.py runs it in a process of its own)."""
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

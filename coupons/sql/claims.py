"""The command's first statement: the Idempotency-Key claim and the coupon's row lock.

Both are SQL because the ORM cannot say them: the claim is an INSERT ... ON CONFLICT DO UPDATE
that reports whether it inserted (`xmax = 0`) and bounds its own wait with a lock_timeout it
restores in the same statement; the row lock is FOR NO KEY UPDATE OF one table of an outer
join, with the transaction's timeouts set in its WHERE and a column that tells whether the
lock waited for a concurrent commit. Joining them into one statement makes a command's first
round trip claim, lock and read everything it needs.
"""

CLAIM = """
    bound AS (
        SELECT current_setting('lock_timeout') AS previous,
               set_config('lock_timeout', %s, true) AS waiting
    ),
    claim AS (
        INSERT INTO coupons_idempotencyrecord (scope, "key", request_hash, status, claimed_at,
                                               seal)
        SELECT %s, %s, %s, %s, %s, %s FROM bound
        ON CONFLICT (scope, "key") DO UPDATE SET status = coupons_idempotencyrecord.status
        RETURNING id, xmax = 0 AS inserted,
                  set_config('lock_timeout', (SELECT previous FROM bound), true) AS restored
    )
"""
"""WITH items inserting an Idempotency-Key's claim, or locking the committed record holding it
(the ON CONFLICT's no-op update takes its row lock). Parameters: the twin wait, scope, key,
request hash, status, claimed at, seal. The wait is a lock_timeout set for the insert only and
put back in RETURNING, so the command's own row lock keeps the session's."""

CLAIM_ALONE = f"WITH {CLAIM} SELECT id, inserted FROM claim"  # noqa: S608 - constants only
"""The claim by itself (a command that locks no coupon row, or a replay's second try)."""

# The columns read with the row lock, per table, in select order: each a model's fields, as
# Model.from_db takes them (tests/coupons/write/test_sql_columns.py holds them to the models).
COUPON_COLUMNS = ("id", "user_id", "template_id", "template_version_id", "status",
                  "state_version", "valid_from", "valid_until", "issued_at", "updated_at",
                  "current_lock_id", "locked_order_id", "lock_token_hash", "lock_expires_at")
TERMS_COLUMNS = ("id", "name", "kind", "face_value", "percent_off", "max_discount",
                 "min_order_amount", "valid_from", "valid_until", "valid_days", "returnable",
                 "expiry_during_lock", "stores", "channel", "return_policy_id", "template_id",
                 "version", "created_at")
LEASE_COLUMNS = ("id", "coupon_id", "order_id", "token_hash", "token_key_id", "status",
                 "locked_at", "expires_at", "acquired_version", "ended_at", "client_id")
ORDER_LINK_COLUMNS = ("id", "lock_id", "coupon_id", "order_id", "quote_id", "order_amount",
                      "discount_amount", "template_version_id", "created_at")


def _select(alias: str, columns: tuple) -> str:
    return ", ".join(f"{alias}.{column}" for column in columns)


ROW_LOCK = f"""
    SELECT {_select("c", COUPON_COLUMNS)},
           {_select("tv", TERMS_COLUMNS)},
           {_select("l", LEASE_COLUMNS)},
           {_select("oc", ORDER_LINK_COLUMNS)},
           {{awaiting}} AS awaiting,
           (SELECT s.xmin FROM coupons_usercoupon s WHERE s.id = c.id) = c.xmin AS as_seen
      FROM coupons_usercoupon c
      JOIN coupons_coupontemplateversion tv ON tv.id = c.template_version_id
      LEFT JOIN coupons_couponlock l ON l.id = c.current_lock_id
      LEFT JOIN coupons_ordercoupon oc ON oc.lock_id = l.id
     WHERE c.id = %s {{claimed}}
       AND set_config('lock_timeout', %s, true) IS NOT NULL
       AND set_config('statement_timeout', %s, true) IS NOT NULL
       FOR NO KEY UPDATE OF c
"""  # noqa: S608 - constants only; every value is a parameter
"""The coupon row locked with its terms, lease and order link, and `{awaiting}`: the after-sale
hook's condition (coupons.after_sale.awaiting_redemption_sql), its parameters first.

NO KEY UPDATE, not UPDATE: the ledger, lease and outbox rows a command inserts reference the
coupon and take KEY SHARE on it, which UPDATE would block. `OF c`: the lease is an outer join,
which PostgreSQL cannot lock through. The set_config calls sit in the WHERE, evaluated before
the lock waits, so that wait already has the command's lock_timeout. `as_seen` is false when
the locked row is newer than the statement's snapshot (the lock waited for a concurrent
command's commit): the joined rows are then the snapshot's and are read again.
`{claimed}` is empty, or the claim's condition when the statement also claims a key."""

CLAIMED = "AND (SELECT inserted FROM claim)"

CLAIMED_AND_LOCKED = ("WITH {claim}, locked AS ({row_lock}) "
                      "SELECT claim.id, claim.inserted, locked.* FROM claim "
                      "LEFT JOIN locked ON true")
"""The claim, then the row lock only if the claim was made (the key was free)."""


def row_lock(awaiting: str) -> str:
    return ROW_LOCK.format(awaiting=awaiting, claimed="")


def claimed_and_locked(awaiting: str) -> str:
    return CLAIMED_AND_LOCKED.format(
        claim=CLAIM, row_lock=ROW_LOCK.format(awaiting=awaiting, claimed=CLAIMED))

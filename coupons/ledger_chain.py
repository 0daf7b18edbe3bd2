"""The hash chain over each coupon's ledger rows.

The database triggers refuse UPDATE and DELETE on the ledger, but a superuser can switch them
off (`SET session_replication_role = replica`, `ALTER TABLE ... DISABLE TRIGGER`). The chain
makes such an edit visible: every row stores `content_hash`, the SHA-256 of the previous row's
hash and the row's canonical content, and `prev_hash`, the previous row's `content_hash` ("" for
ISSUE). Editing a row breaks its own hash; recomputing it breaks the next row's `prev_hash`, so
a silent edit must rewrite every later row of the coupon. The per-coupon check (coupons/replay.py)
recomputes the chain.

Canonical content is every column but the surrogate id and the two hash columns, by attribute
name, with null and empty values left out: a nullable (or blank-by-default) column added to the
ledger later leaves existing hashes valid. A new column with a non-empty default would not.
"""

import hashlib
import json
from datetime import UTC, date, datetime
from decimal import Decimal

GENESIS = ""
HASH_FIELDS = {"id", "content_hash", "prev_hash"}


def _canonical(field, value):
    if isinstance(value, datetime):
        # Stored values come back in UTC; the writer's clock may use another zone.
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return f"{value:.{field.decimal_places}f}"
    if isinstance(value, bool | int | float | dict | list):
        return value
    return str(value)  # text (choices enums included), UUIDs


def canonical_content(operation) -> dict:
    """Works on the current model and on a migration's historical model alike."""
    content = {}
    for field in operation._meta.concrete_fields:
        value = field.value_from_object(operation)
        if field.name in HASH_FIELDS or value is None or value == "":
            continue
        content[field.attname] = _canonical(field, value)
    return content


def chained_hash(operation, prev_hash: str) -> str:
    body = json.dumps(canonical_content(operation), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return hashlib.sha256(f"{prev_hash}\n{body}".encode()).hexdigest()


def seal(operation, prev_hash: str) -> None:
    """Set the row's chain columns before it is inserted."""
    operation.prev_hash = prev_hash
    operation.content_hash = chained_hash(operation, prev_hash)


def chain_breaks(operations) -> list[str]:
    """Where the chain of one coupon's rows (in version order) fails, in words."""
    problems, prev_hash = [], GENESIS
    for op in operations:
        step = f"v{op.to_version} ({op.op_type})"
        if op.prev_hash != prev_hash:
            problems.append(f"hash chain broken at {step}: it does not follow the row before it")
        if op.content_hash != chained_hash(op, op.prev_hash):
            problems.append(f"hash chain broken at {step}: the row was changed after it was "
                            f"written")
        prev_hash = op.content_hash
    return problems

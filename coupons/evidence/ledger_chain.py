"""The keyed hash chain over each coupon's ledger rows.

The database triggers refuse UPDATE and DELETE on the ledger, but a superuser can switch them
off (`SET session_replication_role = replica`, `ALTER TABLE ... DISABLE TRIGGER`). The chain
makes such an edit visible: every row stores `content_hash`, an HMAC-SHA256 under a key of
LEDGER_CHAIN_KEYS (its id in `chain_key_id`) of the previous row's hash and the row's canonical
content, and `prev_hash`, the previous row's `content_hash` ("" for ISSUE). Editing a row breaks
its own hash; recomputing it breaks the next row's `prev_hash`, so a silent edit must rewrite
every later row of the coupon, and without the key, which the database never holds, nobody can.
The per-coupon check (coupons/evidence/replay.py) recomputes the chain.

Rows written before the chain was keyed (`chain_key_id` empty) keep their SHA-256 hashes, which
anyone can recompute. Migration 0015 wrote one sealed `UnkeyedLedgerPrefix` per coupon that had
such rows: how far they go and the hash of the last one, HMAC-sealed. So an unkeyed row after
that point, or on a coupon with no (valid) prefix, is a forgery (a downgrade to the old rule),
and a rewrite of the unkeyed rows changes the hash the prefix sealed.

Canonical content is every column but the surrogate id, the hash columns and the key id, by
attribute name, with null and empty values left out: a nullable (or blank-by-default) column
added to the ledger later leaves existing hashes valid. A new column with a non-empty default
would not.
"""

import hashlib
import hmac
import json
from datetime import UTC, date, datetime
from decimal import Decimal

from django.conf import settings
from django.utils.translation import gettext

GENESIS = ""
HASH_FIELDS = {"id", "content_hash", "prev_hash", "chain_key_id"}


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


def canonical_content(row, skip=HASH_FIELDS) -> dict:
    """Works on the current model and on a migration's historical model alike."""
    content = {}
    for field in row._meta.concrete_fields:
        value = field.value_from_object(row)
        if field.name in skip or value is None or value == "":
            continue
        content[field.attname] = _canonical(field, value)
    return content


def canonical_json(row, skip=HASH_FIELDS) -> str:
    return json.dumps(canonical_content(row, skip), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, default=str)


def chained_hash(operation, prev_hash: str) -> str:
    """The unkeyed rule of rows written before the chain was keyed (anyone can compute it)."""
    return hashlib.sha256(f"{prev_hash}\n{canonical_json(operation)}".encode()).hexdigest()


def unkeyed_seal(operation, prev_hash: str) -> None:
    """The chain columns as migration 0006 wrote them, before the chain was keyed."""
    operation.prev_hash = prev_hash
    operation.content_hash = chained_hash(operation, prev_hash)


def current_key_id() -> str:
    """New rows take the first key of LEDGER_CHAIN_KEYS."""
    return next(iter(settings.LEDGER_CHAIN_KEYS))


def mac(key_id: str, purpose: str, message: str) -> str:
    """HMAC-SHA256 under one chain key; `purpose` keeps a ledger hash from passing as a seal."""
    key = settings.LEDGER_CHAIN_KEYS[key_id].encode()
    return hmac.new(key, f"{purpose}\n{message}".encode(), hashlib.sha256).hexdigest()


def keyed_hash(operation, prev_hash: str, key_id: str) -> str:
    return mac(key_id, "ledger", f"{prev_hash}\n{canonical_json(operation)}")


def seal(operation, prev_hash: str) -> None:
    """Set the row's chain columns before it is inserted (in process: no extra statement)."""
    operation.prev_hash = prev_hash
    operation.chain_key_id = current_key_id()
    operation.content_hash = keyed_hash(operation, prev_hash, operation.chain_key_id)


def prefix_seal(coupon_id: int, through_version: int, head_hash: str, key_id: str) -> str:
    return f"{key_id}:" + mac(key_id, "unkeyed-prefix",
                              f"{coupon_id}\n{through_version}\n{head_hash}")


def prefix_problem(prefix) -> str | None:
    """Why an UnkeyedLedgerPrefix row cannot be trusted, or None."""
    key_id, _, _ = prefix.seal.partition(":")
    if key_id not in settings.LEDGER_CHAIN_KEYS:
        return (gettext("its seal names key id %(key)s, which LEDGER_CHAIN_KEYS does not hold")
                % {"key": repr(key_id)})
    expected = prefix_seal(prefix.coupon_id, prefix.through_version, prefix.head_hash, key_id)
    if not hmac.compare_digest(prefix.seal, expected):
        return gettext("its seal does not match")
    return None


def chain_breaks(operations, prefix=None, prev_hash=GENESIS) -> tuple[list[str], list[str]]:
    """Where the chain of one coupon's rows (in version order) fails, in words, and notes.

    `prefix` is the coupon's UnkeyedLedgerPrefix (None when it has none); it is only needed when
    some row is unkeyed. `prev_hash` is the hash the first row follows: GENESIS from ISSUE, a
    verified row's hash when the check resumes after it (coupons/evidence/check_watermark.py).
    """
    problems, notes = [], []
    unkeyed = [op for op in operations if not op.chain_key_id]
    trusted_prefix = _trusted_prefix(prefix, unkeyed, problems)
    for op in operations:
        step = f"v{op.to_version} ({op.op_type})"
        if op.prev_hash != prev_hash:
            problems.append(gettext("hash chain broken at %(step)s: it does not follow the row "
                                    "before it") % {"step": step})
        problems.extend(_row_problem(op, step, trusted_prefix))
        prev_hash = op.content_hash
    if unkeyed and trusted_prefix is not None and not problems:
        notes.append(unkeyed_note(unkeyed[0].to_version, unkeyed[-1].to_version,
                                  trusted_prefix.through_version))
    return problems, notes


def unkeyed_note(first: int, last: int, through: int) -> str:
    return (gettext("v%(first)s–v%(last)s were written before the chain was keyed: they verify "
                    "under the unkeyed SHA-256 rule, and the keyed seal of v%(through)s's hash "
                    "pins them") % {"first": first, "last": last, "through": through})


def _trusted_prefix(prefix, unkeyed, problems):
    if not unkeyed:
        return None
    if prefix is None:
        problems.append(gettext("hash chain broken: unkeyed rows on a coupon that had none "
                                "when the chain was keyed"))
        return None
    if (why := prefix_problem(prefix)) is not None:
        problems.append(gettext("hash chain broken: the record of rows written before the "
                                "chain was keyed is forged (%(why)s)") % {"why": why})
        return None
    return prefix


def _changed_at(step) -> str:
    return gettext("hash chain broken at %(step)s: the row was changed after it was written") % {
        "step": step}


def _row_problem(op, step, prefix) -> list[str]:
    if not op.chain_key_id:
        if prefix is None:
            return []  # already reported once for the coupon
        if op.to_version > prefix.through_version:
            return [gettext("hash chain broken at %(step)s: an unkeyed row written after the "
                            "chain was keyed (a downgrade to the unkeyed rule)") % {"step": step}]
        if op.content_hash != chained_hash(op, op.prev_hash):
            return [_changed_at(step)]
        if op.to_version == prefix.through_version and op.content_hash != prefix.head_hash:
            return [gettext("hash chain broken at %(step)s: the rows written before the chain "
                            "was keyed were rewritten") % {"step": step}]
        return []
    if op.chain_key_id not in settings.LEDGER_CHAIN_KEYS:
        return [gettext("hash chain broken at %(step)s: keyed with key id %(key)s, which "
                        "LEDGER_CHAIN_KEYS does not hold")
                % {"step": step, "key": repr(op.chain_key_id)}]
    if not hmac.compare_digest(op.content_hash,
                               keyed_hash(op, op.prev_hash, op.chain_key_id)):
        return [_changed_at(step)]
    return []

"""Idempotency-Key records sealed with a key the database never holds.

Anyone with the application's database login can INSERT and UPDATE these records (the claims
and answers are written through it). A record written past the server, or one copied from
another caller's key, would otherwise be replayed as it stands: its answer disclosed, and a
LOCK's lease token derived again from whatever `lock_id` it names. So every record carries an
HMAC under IDEMPOTENCY_SEAL_SECRET (the environment's, never the database's) over its scope,
key, request fingerprint, status and stored answer; a replay first checks it and refuses a
record whose seal does not hold (IDEMPOTENCY_RECORD_INVALID), before anything is derived from
its answer.

The request fingerprint is keyed under the same secret, so it cannot be computed for a
request from the database alone either.

Answers are stored once the command's rows have their ids, so a seal covers all of its answer.
An earlier release stored some answers inside the command's write, before a new row's id was
known (a redeem's `redemption_id`); such a seal names those keys and covers the rest, and
`seal_holds` still checks it that way.
"""

import hashlib
import hmac
import json

from django.conf import settings


def _mac(*parts) -> str:
    message = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                         default=str)
    return hmac.new(settings.IDEMPOTENCY_SEAL_SECRET.encode(), message.encode(),
                    hashlib.sha256).hexdigest()


def request_fingerprint(method: str, path: str, body) -> str:
    return _mac("request", method, path, body)


def record_seal(*, scope: str, key: str, request_hash: str, status: str,
                response_status: int | None = None, response_body=None,
                filled: tuple[str, ...] = ()) -> str:
    """The seal of a record as it is written; `filled` names the answer's keys the database
    fills in (left out of the MAC, named by the seal)."""
    if isinstance(response_body, dict) and filled:
        response_body = {name: value for name, value in response_body.items()
                         if name not in filled}
    names = ",".join(sorted(filled))
    return f"{names}:" + _mac("record", scope, key, request_hash, status, response_status,
                              response_body, names)


def seal_holds(record) -> bool:
    names, colon, _ = (record.seal or "").partition(":")
    if not colon:
        return False
    expected = record_seal(
        scope=record.scope, key=record.key, request_hash=record.request_hash,
        status=record.status, response_status=record.response_status,
        response_body=record.response_body, filled=tuple(filter(None, names.split(","))))
    return hmac.compare_digest(expected, record.seal)

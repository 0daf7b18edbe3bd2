"""Idempotency-Key claims (SPEC §5, IETF Idempotency-Key draft).

The claim is the first write of the command's own transaction: an INSERT that the
(scope, key) unique index arbitrates. A concurrent twin's INSERT waits for the first
transaction; once that commits the twin reads and answers the stored result, and if it is
still running after a short wait the twin is told 409. A command that rolls back takes its
claim with it, so a retry simply runs.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction

from coupons import clock
from coupons.errors import IdempotencyKeyReused, IdempotencyRequestInProgress
from coupons.models import IdempotencyRecord

# PostgreSQL's lock_not_available: the twin's wait on the first transaction ran out.
LOCK_NOT_AVAILABLE = "55P03"


@dataclass(frozen=True)
class Claim:
    record_id: int | None = None
    replay_status: int | None = None
    replay_body: dict | None = None

    @property
    def is_replay(self) -> bool:
        return self.record_id is None


def request_fingerprint(method: str, path: str, body) -> str:
    canonical = json.dumps([method, path, body], sort_keys=True, separators=(",", ":"),
                           default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def idempotency_claim(*, scope: str, key: str, request_hash: str) -> Claim:
    """Claim a key in the caller's transaction.

    The API makes that the command's own (coupons.api.commands): the claim becomes visible
    together with the command's effects and its stored answer, or vanishes with them. Called
    in autocommit (the console's queue actions) the claim commits alone, and the caller drops
    it with idempotency_abandon if its command crashes.
    """
    now = clock.now()
    if connection.vendor == "postgresql":
        record_id, inserted = _insert_or_lock(scope, key, request_hash, now)
        if inserted:
            return Claim(record_id=record_id)
        record = IdempotencyRecord.objects.get(pk=record_id)
    else:
        try:
            with transaction.atomic():
                record = IdempotencyRecord.objects.create(
                    scope=scope, key=key, request_hash=request_hash,
                    status=IdempotencyRecord.Status.IN_PROGRESS, claimed_at=now,
                )
            return Claim(record_id=record.pk)
        except IntegrityError:
            record = IdempotencyRecord.objects.select_for_update().get(scope=scope, key=key)
    return _existing_claim(record, request_hash, now)


def _insert_or_lock(scope, key, request_hash, now) -> tuple[int, bool]:
    """One statement: insert the claim, or lock the committed record already holding the key.

    Waiting on a twin's uncommitted claim is bounded by a lock_timeout set for this statement
    only (set_config before the insert, the previous value restored in RETURNING), so the
    command's own row locks keep the session's setting.
    """
    wait = f"{settings.COUPONS['IDEMPOTENCY_TWIN_WAIT_MS']}ms"
    table = IdempotencyRecord._meta.db_table
    sql = f"""
        WITH bound AS (
            SELECT current_setting('lock_timeout') AS previous,
                   set_config('lock_timeout', %s, true) AS waiting
        )
        INSERT INTO {table} (scope, "key", request_hash, status, claimed_at)
        SELECT %s, %s, %s, %s, %s FROM bound
        ON CONFLICT (scope, "key") DO UPDATE SET status = {table}.status
        RETURNING id, xmax = 0, set_config('lock_timeout', (SELECT previous FROM bound), true)
    """  # noqa: S608 - the table name is the model's, every value is a parameter
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql, [wait, scope, key, request_hash,
                                 IdempotencyRecord.Status.IN_PROGRESS, now])
            record_id, inserted, _ = cursor.fetchone()
    except OperationalError as error:
        if getattr(error.__cause__, "sqlstate", None) == LOCK_NOT_AVAILABLE:
            raise IdempotencyRequestInProgress() from None
        raise
    return record_id, inserted


def _existing_claim(record, request_hash, now) -> Claim:
    if record.request_hash != request_hash:
        raise IdempotencyKeyReused()
    if record.status == IdempotencyRecord.Status.COMPLETED:
        return Claim(replay_status=record.response_status, replay_body=record.response_body)
    # Committed IN_PROGRESS: a claim made outside a command's transaction (an older release did
    # that) whose worker may have died; its command rolled back, so after the timeout run it.
    timeout = timedelta(seconds=settings.COUPONS["IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS"])
    if now - record.claimed_at < timeout:
        raise IdempotencyRequestInProgress()
    record.claimed_at = now
    record.save(update_fields=["claimed_at"])
    return Claim(record_id=record.pk)


def idempotency_complete(ctx, *, status: int, body: dict) -> None:
    """Store the answer in the command's transaction (the claim's own); `ctx.answered_records`
    tells the API it need not store it again."""
    if ctx.idempotency_record_id is None:
        return
    IdempotencyRecord.objects.filter(
        pk=ctx.idempotency_record_id, status=IdempotencyRecord.Status.IN_PROGRESS
    ).update(
        status=IdempotencyRecord.Status.COMPLETED, response_status=status,
        response_body=body, completed_at=clock.now(),
    )
    ctx.answered_records.add(ctx.idempotency_record_id)


def idempotency_abandon(record_id: int) -> None:
    """Drop a claim committed on its own whose command crashed before taking effect, so a
    retry can run at once."""
    IdempotencyRecord.objects.filter(
        pk=record_id, status=IdempotencyRecord.Status.IN_PROGRESS
    ).delete()

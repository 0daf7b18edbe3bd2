"""Idempotency-Key claims (SPEC §5, IETF Idempotency-Key draft)."""

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction

from coupons import clock
from coupons.errors import IdempotencyKeyReused, IdempotencyRequestInProgress
from coupons.models import IdempotencyRecord


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
    """Claim a key before the command runs, in a transaction of its own.

    The claim commits before the command starts, so a second request with the same key that
    arrives while the first is running sees IN_PROGRESS and is told 409 instead of racing it.
    """
    now = clock.now()
    # Twice at most: the claim we collided with may be abandoned (deleted) before we read it.
    for _ in range(2):
        with transaction.atomic():
            try:
                with transaction.atomic():
                    record = IdempotencyRecord.objects.create(
                        scope=scope, key=key, request_hash=request_hash,
                        status=IdempotencyRecord.Status.IN_PROGRESS, claimed_at=now,
                    )
                return Claim(record_id=record.pk)
            except IntegrityError:
                pass
            record = (IdempotencyRecord.objects.select_for_update()
                      .filter(scope=scope, key=key).first())
            if record is not None:
                return _existing_claim(record, request_hash, now)
    raise IdempotencyRequestInProgress()


def _existing_claim(record, request_hash, now) -> Claim:
    if record.request_hash != request_hash:
        raise IdempotencyKeyReused()
    if record.status == IdempotencyRecord.Status.COMPLETED:
        return Claim(replay_status=record.response_status, replay_body=record.response_body)
    timeout = timedelta(seconds=settings.COUPONS["IDEMPOTENCY_CLAIM_TIMEOUT_SECONDS"])
    if now - record.claimed_at < timeout:
        raise IdempotencyRequestInProgress()
    # The first worker died mid-command; its transaction rolled back, so run it again.
    record.claimed_at = now
    record.save(update_fields=["claimed_at"])
    return Claim(record_id=record.pk)


def idempotency_complete(ctx, *, status: int, body: dict) -> None:
    """Store the answer; called inside the command's own transaction on success."""
    if ctx.idempotency_record_id is None:
        return
    IdempotencyRecord.objects.filter(
        pk=ctx.idempotency_record_id, status=IdempotencyRecord.Status.IN_PROGRESS
    ).update(
        status=IdempotencyRecord.Status.COMPLETED, response_status=status,
        response_body=body, completed_at=clock.now(),
    )


def idempotency_abandon(record_id: int) -> None:
    """Drop a claim whose command crashed before taking effect, so a retry can run at once."""
    IdempotencyRecord.objects.filter(
        pk=record_id, status=IdempotencyRecord.Status.IN_PROGRESS
    ).delete()

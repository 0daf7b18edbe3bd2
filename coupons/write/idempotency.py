"""Idempotency-Key claims (docs/api.md, the IETF Idempotency-Key draft).

The claim is the first write of the command's own transaction: an INSERT that the
(scope, key) unique index arbitrates. A concurrent twin's INSERT waits for the first
transaction; once that commits the twin reads and answers the stored result, and if it is
still running after a short wait the twin is told 409. A command that rolls back takes its
claim with it, so a retry simply runs.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import OperationalError, connection, transaction

from coupons import clock
from coupons.errors import (
    CouponBusy,
    CouponError,
    IdempotencyKeyReused,
    IdempotencyRecordInvalid,
    IdempotencyRequestInProgress,
)
from coupons.models import IdempotencyRecord
from coupons.sql import claims
from coupons.write.context import (
    CommandContext,
    DeferredClaim,
    answer_record_id,
    pending_claim,
)
from coupons.write.idempotency_seal import record_seal, seal_holds
from coupons.write.refusals import record_after_rollback

logger = logging.getLogger(__name__)

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


def idempotency_claim(*, scope: str, key: str, request_hash: str) -> Claim:
    """Claim a key in the caller's transaction (run_once makes that the command's own)."""
    now = clock.now()
    record_id, inserted = _insert_or_lock(scope, key, request_hash, now)
    if inserted:
        return Claim(record_id=record_id)
    record = IdempotencyRecord.objects.get(pk=record_id)
    return _existing_claim(record, request_hash, now)


class ClaimTaken(Exception):  # noqa: N818 - a signal between run_once and the row lock
    """A deferred claim found its key already held (never leaves run_once).

    `clean`: nothing was written or locked before the claim in this transaction, so run_once
    answers from the held record in the same transaction; otherwise it rolls back first.
    """

    def __init__(self, record_id: int, *, clean: bool):
        super().__init__(record_id)
        self.record_id, self.clean = record_id, clean


class ClaimInProgress(Exception):  # noqa: N818 - a signal, turned into the 409 by run_once
    """A deferred claim waited out its twin; the transaction is aborted."""


def claim_params(scope, key, request_hash, now) -> list:
    """The parameters of coupons.sql.claims.CLAIM, in its order."""
    wait = f"{settings.COUPONS['IDEMPOTENCY_TWIN_WAIT_MS']}ms"
    status = IdempotencyRecord.Status.IN_PROGRESS
    seal = record_seal(scope=scope, key=key, request_hash=request_hash, status=status)
    return [wait, scope, key, request_hash, status, now, seal]


def claiming(cursor, sql, params, *, with_row_lock=False):
    """Run a statement that holds coupons.sql.claims.CLAIM; a twin's claim that outlasted the
    wait raises ClaimInProgress. `with_row_lock`: the statement also locks a coupon row, whose
    wait running out (rows.lock_coupon_row says CouponBusy) is told apart by the relation
    PostgreSQL names."""
    try:
        cursor.execute(sql, params)
    except OperationalError as error:
        cause = error.__cause__
        if getattr(cause, "sqlstate", None) == LOCK_NOT_AVAILABLE and (
                not with_row_lock or f'relation "{IdempotencyRecord._meta.db_table}"'
                in (cause.diag.context or "")):
            raise ClaimInProgress() from None
        raise


def _insert_or_lock(scope, key, request_hash, now) -> tuple[int, bool]:
    """One statement: insert the claim, or lock the committed record already holding the key."""
    params = claim_params(scope, key, request_hash, now)
    with connection.cursor() as cursor:
        try:
            claiming(cursor, claims.CLAIM_ALONE, params)
        except ClaimInProgress:
            raise IdempotencyRequestInProgress() from None
        record_id, inserted = cursor.fetchone()
    return record_id, inserted


def _existing_claim(record, request_hash, now) -> Claim:
    # First: nothing is read from a record the server did not write, its answer least of
    # all (a LOCK replay would derive the lease token of whatever lock it names).
    if not seal_holds(record):
        logger.warning("idempotency record %s (%s, key %r) does not carry its seal: refused",
                       record.pk, record.scope, record.key)
        raise IdempotencyRecordInvalid()
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


def answer_seal(ctx, *, status: int, body: dict, filled: tuple[str, ...] = ()) -> str:
    """The seal of the record `ctx` claimed once it holds this answer."""
    return record_seal(scope=ctx.idempotency_scope, key=ctx.idempotency_key,
                       request_hash=ctx.request_hash, status=IdempotencyRecord.Status.COMPLETED,
                       response_status=status, response_body=body, filled=filled)


def idempotency_complete(ctx, *, status: int, body: dict) -> None:
    """Store the answer in the command's transaction (the claim's own): run_once does, once the
    command answered or was refused, and nothing else."""
    record_id = answer_record_id(ctx)
    if record_id is None:
        return
    IdempotencyRecord.objects.filter(
        pk=record_id, status=IdempotencyRecord.Status.IN_PROGRESS
    ).update(
        status=IdempotencyRecord.Status.COMPLETED, response_status=status,
        response_body=body, completed_at=clock.now(),
        seal=answer_seal(ctx, status=status, body=body),
    )


@dataclass(frozen=True)
class Answer:
    """A command's answer under its key: the first run's, or the stored one replayed."""

    status: int
    body: dict
    replayed: bool = False
    refusal: CouponError | None = None  # the domain error the first run was refused with


def run_once(
    *, scope: str, key: str, request_hash: str, actor: str, client_id: int | None = None,
    command: Callable[[CommandContext], dict], success_status: int = 200,
) -> Answer:
    """Claim `key`, run `command(ctx)` and store its answer, all in one transaction.

    The API (an Idempotency-Key header) and the console (a key rendered with each form) both
    run commands through here. The claim, the command and the stored answer commit together; a
    crash rolls all three back, so a retry runs. A refusal is the key's answer too: the same
    key again gets the same error, not a second attempt. A key reused for another request, or
    still running in a twin, raises (422 / 409).

    The claim is deferred to the command's first statement, its row lock
    (rows.lock_coupon_row), or made after a command that took none. A key found held there
    answers from the held record: in the same transaction when nothing came before the claim,
    else after rolling back what the command did.
    """
    run = {"scope": scope, "key": key, "request_hash": request_hash, "actor": actor,
           "client_id": client_id,
           "command": command, "success_status": success_status}
    try:
        claim = DeferredClaim(scope, key, request_hash)
        with transaction.atomic(durable=True), connection.execute_wrapper(claim.watch):
            try:
                return _run(claim, **run)
            except ClaimTaken as taken:
                if not taken.clean:
                    raise
                record = IdempotencyRecord.objects.get(pk=taken.record_id)
                return _run_claimed(_existing_claim(record, request_hash, clock.now()), **run)
    except ClaimTaken:
        pass  # rolled back; claim again, first this time
    except ClaimInProgress:
        raise IdempotencyRequestInProgress() from None
    except CouponBusy as busy:
        # Rolled back with its claim: not the key's answer, a retry with the key runs again.
        record_after_rollback(busy)
        raise
    with transaction.atomic(durable=True):
        claim = idempotency_claim(scope=scope, key=key, request_hash=request_hash)
        return _run_claimed(claim, **run)


def _run_claimed(claim: Claim, **run) -> Answer:
    if claim.is_replay:
        return Answer(claim.replay_status, claim.replay_body, replayed=True)
    return _run(claim.record_id, **run)


def _run(record, *, scope, key, request_hash, actor, client_id, command,
         success_status) -> Answer:
    """The command under its claim `record` (an id, or a DeferredClaim), its answer stored."""
    ctx = CommandContext(
        actor=actor, client_id=client_id, idempotency_scope=scope, idempotency_key=key,
        request_hash=request_hash, idempotency_record_id=record,
    )
    try:
        answer = Answer(success_status, command(ctx))
    except CouponBusy:
        raise  # a wait that ran out, not the command's answer: nothing is stored under the key
    except CouponError as error:
        # The command kept nothing it wrote (its savepoint rolled back, or it was refused
        # before its one write); its rejection row commits with this answer.
        answer = Answer(error.http_status, error.as_body(), refusal=error)
    if (claim := pending_claim(ctx)) is not None:
        _claim_late(claim)
    idempotency_complete(ctx, status=answer.status, body=answer.body)
    return answer


def _claim_late(claim: DeferredClaim) -> None:
    """The command took no row lock to claim with: claim now, after what it did, which rolls
    back if the key turns out to be held."""
    record_id, inserted = _insert_or_lock(claim.scope, claim.key, claim.request_hash,
                                          clock.now())
    if not inserted:
        raise ClaimTaken(record_id, clean=False)
    claim.record_id = record_id

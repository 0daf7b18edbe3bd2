from contextlib import nullcontext
from dataclasses import dataclass

from django.db import connection, transaction

from coupons.write.tokens import hash_token


@dataclass(frozen=True)
class CommandContext:
    """Who runs a command and under which Idempotency-Key; goes into the ledger row.

    `client_id` is the service client running it (the API sets it): a lease it takes answers
    only to it. None for console users and internal callers (event handlers, scanners).
    """

    actor: str
    client_id: int | None = None
    idempotency_scope: str = ""  # whose key: what the stored answer's seal names
    idempotency_key: str = ""
    request_hash: str = ""
    # The key's record, claimed by run_once (which stores the answer once the command
    # returns), or a DeferredClaim the command's row lock claims in the same statement
    # (rows.lock_coupon_row). `replace(ctx, idempotency_record_id=None)` means "this call is
    # part of another command's answer": it claims nothing.
    idempotency_record_id: "int | DeferredClaim | None" = None


@dataclass
class DeferredClaim:
    """An Idempotency-Key to claim with the command's first statement; `record_id` once claimed."""

    scope: str
    key: str
    request_hash: str
    record_id: int | None = None
    # Set by command_transaction: the command claims with its row lock, outside any savepoint.
    with_row_lock: bool = False
    # Statements run in the claim's transaction until it was made, the claim's included.
    statements: int = 0

    def watch(self, execute, sql, params, many, context):
        """A connection.execute_wrapper: counts statements until the claim is made."""
        if self.pending:
            self.statements += 1
        return execute(sql, params, many, context)

    @property
    def clean(self) -> bool:
        """Nothing ran before the claim: a held key can be answered in the same transaction."""
        return self.statements == 1

    @property
    def pending(self) -> bool:
        return self.record_id is None


def answer_record_id(ctx) -> int | None:
    """The idempotency record the command's answer goes to, once it is claimed."""
    record = ctx.idempotency_record_id
    return record.record_id if isinstance(record, DeferredClaim) else record


def pending_claim(ctx) -> "DeferredClaim | None":
    record = ctx.idempotency_record_id
    return record if isinstance(record, DeferredClaim) and record.pending else None


def command_transaction(ctx):
    """A command's own transaction: a savepoint in the caller's, so a refusal rolls back what
    the command wrote and the caller (run_once: the claim, the refusal's row and answer) goes on.

    Not when run_once deferred the claim to this command: its row lock claims the
    key (outside any savepoint, or a refusal would roll the claim back) and its writes are the
    one statement of coupons.write.transitions.apply_transition, so a refusal, coming before
    that statement or from its compare-and-set that wrote nothing, has nothing to roll back.
    """
    claim = pending_claim(ctx)
    if claim is None or not connection.in_atomic_block:
        return transaction.atomic()
    claim.with_row_lock = True
    return nullcontext()


@dataclass(frozen=True)
class LeaseProof:
    """What a caller shows to prove it holds the coupon's current lease.

    External callers bring the lease token they were given; internal callers (event handlers,
    scanners) bring the lock id and the stored token hash they read. Never the coupon id alone.
    """

    order_id: str
    token_hash: str
    expected_version: int
    lock_id: object = None

    @classmethod
    def from_token(cls, *, order_id: str, lock_token: str, expected_version: int) -> "LeaseProof":
        return cls(order_id=order_id, token_hash=hash_token(lock_token),
                   expected_version=expected_version)

    @classmethod
    def from_lock(cls, lock, *, expected_version: int) -> "LeaseProof":
        return cls(order_id=lock.order_id, token_hash=lock.token_hash,
                   expected_version=expected_version, lock_id=lock.pk)

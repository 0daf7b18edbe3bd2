from dataclasses import dataclass, field

from coupons.services.tokens import hash_token


@dataclass(frozen=True)
class CommandContext:
    """Who runs a command and under which Idempotency-Key; goes into the ledger row.

    `client_id` is the service client running it (the API sets it): a lease it takes answers
    only to it. None for console users and internal callers (event handlers, scanners).
    """

    actor: str
    client_id: int | None = None
    idempotency_key: str = ""
    request_hash: str = ""
    # Set when the API claimed the key; the command completes the record in its own transaction.
    idempotency_record_id: int | None = None
    # The claims whose answer the command stored, so the API does not write it a second time.
    answered_records: set = field(default_factory=set, compare=False)
    success_status: int = 200


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

"""What the per-coupon check already verified, so a view re-reads only the rows after it.

The full check (coupons/evidence/replay.py) re-reads and folds a coupon's whole ledger: seconds
at 20,000 rows. Once it holds, the check stores a CheckWatermark: the last version whose row,
and every row before it, the newest verified signed head covers (coupons/evidence/
signed_coverage.py: their journal entries sit below the journal size it signed), the hash of
that row's journal entry, the replay's state after it (state, version, current lease, which
leases' redemptions count, how many LOCK and REDEEM rows), the signed size it rests on, and how
far it read the coupon's refusals and after-sale rows. The next check resumes there: it replays
the newer rows from the stored state and folds each against its journal entry.

What the check trusts, and why:
- below the watermark, the signed head: a row there was folded by a check before the head
  covered it, and the signer folds the rows of the entries it signs; a row rewritten after
  that, with or without its entry, is named by the signer (its log is no extension of the one
  it signed) or by `verify_ledger` (which folds every row), not by this check;
- the watermark only while the newest checkpoint that verifies (signature under the verifying
  key) signs at least the size the watermark rests on: no verified head, a
  forged checkpoint row, or a key that no longer verifies the head, and the check reads every
  row;
- above the newest signed head, nothing: every row not covered yet is read and folded on every
  check, however often a check held;
- the watermark is sealed with an HMAC under the server's SECRET_KEY, which the database never
  holds: a forged or edited one (a snapshot that claims another state) is ignored;
- the coupon's leases and redemptions are counted against the LOCK and REDEEM rows the ledger
  holds, so an inserted or deleted one shows.
On any mismatch the check reads the whole ledger, and reports what it finds. The watermark
never turns a failing check into a passing one: it is written only by a check that held, and a
full check (`manage.py coupon_check --full`) never reads it. Reconciliation (operations/
reconcile) runs its own checks and never reads it either.

The coupon's other evidence rows (bindings, refusals, notes, after-sale's rows) are folded
against their journal entries by coupons.evidence.journal_check, whose marks the watermark
keeps under the same rule; the full check folds all of them.
"""

import hmac
import json
import uuid
from dataclasses import dataclass, field

from django.db.models.expressions import RawSQL
from django.utils.crypto import salted_hmac

from coupons import clock
from coupons.evidence.checkpoint_keys import key_id
from coupons.evidence.checkpoint_proofs import latest_checkpoint, verified
from coupons.evidence.journal import content_hash, with_journal
from coupons.evidence.signed_coverage import with_log_position
from coupons.models import (
    CheckWatermark,
    CouponLock,
    CouponOperation,
    LedgerCheckpoint,
    OperationType,
    Redemption,
)

WATERMARK = CheckWatermark._meta.db_table
SEAL_SALT = "coupons.check-watermark"
# The newest checkpoint under the verifying key's id, read with the watermark: verified in
# Python (its signature) before anything rests on it.
CHECKPOINT = LedgerCheckpoint._meta.db_table
NEWEST_CHECKPOINT_SQL = (
    "(SELECT json_build_object('id', c.id, 'number', c.number, 'key_id', c.key_id, "  # noqa: S608
    "'body', c.body, "
    f"'signature', c.signature)::text FROM {CHECKPOINT} c WHERE c.key_id = %s "
    "ORDER BY c.number DESC LIMIT 1)")
COUNTS_SQL = {
    "locks_now": f"SELECT count(*) FROM {CouponLock._meta.db_table} l "
                 f"WHERE l.coupon_id = {WATERMARK}.coupon_id",
    "redemptions_now": f"SELECT count(*) FROM {Redemption._meta.db_table} r "
                       f"WHERE r.coupon_id = {WATERMARK}.coupon_id",
    # The coupon row's own checks read the active leases and the redemptions that count only
    # when there are any: for most coupons, none.
    "active_locks_now": f"SELECT count(*) FROM {CouponLock._meta.db_table} l "
                        f"WHERE l.coupon_id = {WATERMARK}.coupon_id AND l.status = 'ACTIVE'",
    "successful_now": f"SELECT count(*) FROM {Redemption._meta.db_table} r "
                      f"WHERE r.coupon_id = {WATERMARK}.coupon_id AND r.succeeded",
}


@dataclass
class Replayed:
    """The replay's state after some version: where the check resumes."""

    state: str | None = None
    version: int = 0
    current_lock: uuid.UUID | None = None
    # Leases whose redemption counts now, as REDEEM, RETURN and their reversals left it.
    counted: set = field(default_factory=set)
    # Leases whose redemption this check must compare with `counted`.
    touched: set = field(default_factory=set)
    locks: int = 0  # LOCK rows
    redeems: int = 0  # REDEEM rows
    # The distinct (operation, from state, to state) steps: the coupon's path (state diagram).
    steps: set = field(default_factory=set)

    def as_json(self) -> dict:
        return {"state": self.state, "version": self.version,
                "current_lock": str(self.current_lock) if self.current_lock else None,
                "counted": sorted(str(lock) for lock in self.counted),
                "locks": self.locks, "redeems": self.redeems,
                "steps": sorted(self.steps)}

    @classmethod
    def from_json(cls, data: dict) -> "Replayed":
        lock = data["current_lock"]
        return cls(state=data["state"], version=data["version"],
                   current_lock=uuid.UUID(lock) if lock else None,
                   counted={uuid.UUID(lock) for lock in data["counted"]},
                   locks=data["locks"], redeems=data["redeems"],
                   steps={tuple(step) for step in data["steps"]})


@dataclass
class Mark:
    """Where the next check may resume: the replay after the last row the signed head covers."""

    version: int
    head_hash: str  # the hash of that row's journal entry
    replayed: dict  # Replayed.as_json() after it


@dataclass
class Resume:
    """A trusted watermark and the ledger rows after it."""

    through_version: int
    mark: Mark  # the watermark as stored
    replayed: Replayed
    marks: dict  # how far the journaled tables were read (coupons.evidence.journal_check)
    active_locks: int  # the coupon's active leases now
    successful: int  # its redemptions that count now
    operations: list  # the rows after the watermark, in version order
    originals: dict  # {id: row} of earlier rows those rows name (RETURN, REVERSE)


def entry_hash(row) -> str | None:
    """The hash of the newest journal entry of `row` (read with_journal)."""
    return content_hash(row.journal[-1]) if row.journal else None


def _sealed_text(coupon_id, through_version, head_hash, signed_size, snapshot) -> str:
    return json.dumps([coupon_id, through_version, head_hash, signed_size, snapshot],
                      sort_keys=True, separators=(",", ":"))


def watermark_seal(*args) -> str:
    return salted_hmac(SEAL_SALT, _sealed_text(*args), algorithm="sha256").hexdigest()


def _seal_holds(row) -> bool:
    expected = watermark_seal(row.coupon_id, row.through_version, row.head_hash,
                              row.signed_size, row.snapshot)
    return hmac.compare_digest(row.seal, expected)


def stored(coupon, key) -> CheckWatermark | None:
    """The coupon's watermark, with what the database counts now and the newest checkpoint
    under the verifying key's id (`newest_checkpoint`, JSON text), in one query."""
    extra = {name: RawSQL(f"({sql})", ()) for name, sql in COUNTS_SQL.items()}
    if key is not None:
        extra["newest_checkpoint"] = RawSQL(NEWEST_CHECKPOINT_SQL, [key_id(key)])
    return CheckWatermark.objects.filter(coupon_id=coupon.pk).annotate(**extra).first()


def newest_verified(row, key) -> LedgerCheckpoint | None:
    """The newest checkpoint that verifies under `key`: the one the watermark's query read,
    when it does; else latest_checkpoint() (a query more: the first check, or a row someone
    INSERTed on top of the signed ones)."""
    if row is None:
        return latest_checkpoint()
    if key is None or row.newest_checkpoint is None:
        return None
    data = json.loads(row.newest_checkpoint)
    candidate = LedgerCheckpoint(pk=data["id"], number=data["number"], key_id=data["key_id"],
                                 body=data["body"], signature=data["signature"])
    return verified(candidate, key) or latest_checkpoint()


def resume_point(coupon, row, signed: int) -> Resume | None:
    """Where the check can resume for `coupon` from its watermark `row` (read by `stored`), or
    None: verify the whole ledger. `signed` is the journal size the newest verified checkpoint
    signed (coupons.evidence.signed_coverage): a watermark that rests on more is not trusted.

    One query: the ledger rows from the watermark on; a second only when new rows name
    earlier ones.
    """
    if row is None or not 0 < row.signed_size <= signed or not _seal_holds(row):
        return None
    operations = list(with_log_position(with_journal(CouponOperation.objects.filter(
        coupon_id=coupon.pk, to_version__gte=row.through_version).order_by("to_version"))))
    if not operations or operations[0].to_version != row.through_version \
            or entry_hash(operations[0]) != row.head_hash:
        return None
    newer = operations[1:]
    replayed = Replayed.from_json(row.snapshot["replayed"])
    if row.locks_now != replayed.locks + sum(op.op_type == OperationType.LOCK for op in newer):
        return None
    if row.redemptions_now != replayed.redeems + sum(op.op_type == OperationType.REDEEM
                                                     for op in newer):
        return None
    return Resume(through_version=row.through_version,
                  mark=Mark(version=row.through_version, head_hash=row.head_hash,
                            replayed=row.snapshot["replayed"]),
                  replayed=replayed, marks=row.snapshot["marks"],
                  active_locks=row.active_locks_now, successful=row.successful_now,
                  operations=newer, originals=_originals(coupon, newer))


def _originals(coupon, operations) -> dict:
    """The earlier rows the new ones name, with the rows those name (a REVERSE of a RETURN
    needs its REDEEM): one query, and none when no new row names another."""
    new_ids = {op.pk for op in operations}
    wanted = {op.original_operation_id for op in operations} - new_ids - {None}
    if not wanted:
        return {}
    found = {}
    for op in CouponOperation.objects.filter(coupon_id=coupon.pk, pk__in=wanted) \
            .select_related("original_operation"):
        found[op.pk] = op
        if op.original_operation is not None:
            found.setdefault(op.original_operation_id, op.original_operation)
    return found


def remember(coupon, *, previous: Resume | None, mark: Mark | None, marks: dict,
             signed: int) -> None:
    """Store (or move forward) the watermark at `mark` (None: where `previous` was) after a
    check that held, resting on the signed journal size `signed`. Nothing is written when
    neither it nor the journal's marks moved (the check read nothing newly signed)."""
    if previous is not None:
        if mark is None and marks == previous.marks:
            return
        mark = mark or previous.mark
    if mark is None:
        return
    snapshot = {"replayed": mark.replayed, "marks": marks}
    row = CheckWatermark(
        coupon_id=coupon.pk, through_version=mark.version, head_hash=mark.head_hash,
        signed_size=signed, snapshot=snapshot, verified_at=clock.now(),
        seal=watermark_seal(coupon.pk, mark.version, mark.head_hash, signed, snapshot))
    # Two checks at once both write; either watermark is true, so the last one stays.
    CheckWatermark.objects.bulk_create(
        [row], update_conflicts=True, unique_fields=["coupon"],
        update_fields=["through_version", "head_hash", "signed_size", "snapshot",
                       "verified_at", "seal"])

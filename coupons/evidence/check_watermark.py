"""What the per-coupon check already verified, so a view re-reads only the rows after it.

The full check (coupons/evidence/replay.py) re-reads and re-hashes a coupon's whole ledger: seconds
at
20,000 rows. Once it holds, the check stores a CheckWatermark: the last version it verified,
that row's hash, the replay's state after it (state, version, current lease, which leases'
redemptions count, how many LOCK and REDEEM rows) and how far it read the coupon's refusals
and after-sale rows. The next check resumes there: the row at that version must still have
the stored journal entry hash, and it replays the newer rows from the stored state.

What keeps the shortcut honest when someone writes past the database's triggers:
- the watermark is sealed with an HMAC under the server's SECRET_KEY, which the database never
  holds: a forged or edited one is ignored;
- in the query that reads it, the database fingerprints the rows up to the watermark: on
  their count and the sum of their `xmin`, the id of the transaction that wrote
  each row version. Any UPDATE, DELETE or INSERT among them, triggers or not, makes new row
  versions with a newer transaction id, which SQL cannot choose; reading tuple headers costs
  a fraction of re-hashing the rows. (A restore or a table rewrite that gives rows new
  versions only sends the check back to the whole ledger once.)
- the coupon's leases and redemptions are counted against the LOCK and REDEEM rows the
  ledger holds, so an inserted or deleted one shows.
On any mismatch the check re-verifies the whole ledger, and reports what it finds. The
watermark never turns a failing check into a passing one: it is written only by a check that
held, and a full check (`manage.py coupon_check --full`) never reads it. Reconciliation
(operations/reconcile) runs its own checks and never reads it either.

The coupon's other evidence rows (bindings, refusals, notes, after-sale's rows) are folded
against their journal entries by coupons.evidence.journal_check, whose marks the watermark
keeps; the full check folds all of them.
"""

import hmac
import json
import uuid
from dataclasses import dataclass, field

from django.db import connection
from django.db.models.expressions import RawSQL
from django.utils.crypto import salted_hmac

from coupons import clock
from coupons.evidence.journal import content_hash, with_journal
from coupons.models import (
    CheckWatermark,
    CouponLock,
    CouponOperation,
    OperationType,
    Redemption,
)

LEDGER = CouponOperation._meta.db_table
WATERMARK = CheckWatermark._meta.db_table
SEAL_SALT = "coupons.check-watermark"
# The fingerprint of the verified rows (see above); what it is made of differs by database,
# and each database compares it only with one it made itself.
DIGEST_SQL = f"""
    SELECT count(*) || ':' || coalesce(sum(o.xmin::text::bigint), 0)
    FROM {LEDGER} o
    WHERE o.coupon_id = {WATERMARK}.coupon_id AND o.to_version <= {WATERMARK}.through_version
"""
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
class Resume:
    """A trusted watermark and the ledger rows after it."""

    through_version: int
    replayed: Replayed
    marks: dict  # how far the journaled tables were read (coupons.evidence.journal_check)
    active_locks: int  # the coupon's active leases now
    successful: int  # its redemptions that count now
    operations: list  # the rows after the watermark, in version order
    originals: dict  # {id: row} of earlier rows those rows name (RETURN, REVERSE)


def _sealed_text(coupon_id, through_version, head_hash, prefix_digest, snapshot) -> str:
    return json.dumps([coupon_id, through_version, head_hash, prefix_digest, snapshot],
                      sort_keys=True, separators=(",", ":"))


def entry_hash(row) -> str | None:
    """The hash of the newest journal entry of `row` (read with_journal)."""
    return content_hash(row.journal[-1]) if row.journal else None


def watermark_seal(*args) -> str:
    return salted_hmac(SEAL_SALT, _sealed_text(*args), algorithm="sha256").hexdigest()


def _seal_holds(row) -> bool:
    expected = watermark_seal(row.coupon_id, row.through_version, row.head_hash,
                              row.prefix_digest, row.snapshot)
    return hmac.compare_digest(row.seal, expected)


def prefix_digest(coupon_id: int, through_version: int) -> str:
    """The fingerprint DIGEST_SQL computes, for the watermark about to be written."""
    with connection.cursor() as cursor:
        cursor.execute(DIGEST_SQL.replace(f"{WATERMARK}.coupon_id", "%s")
                       .replace(f"{WATERMARK}.through_version", "%s"),
                       [coupon_id, through_version])
        return cursor.fetchone()[0]


def resume_point(coupon) -> Resume | None:
    """Where the check can resume for `coupon`, or None: verify the whole ledger.

    Two queries: the watermark with what the database says now (fingerprint, counts), then
    the ledger rows from the watermark on; a third only when new rows name earlier ones.
    """
    extra = {name: RawSQL(f"({sql})", ()) for name, sql in COUNTS_SQL.items()}
    extra["digest_now"] = RawSQL(f"({DIGEST_SQL})", ())
    row = CheckWatermark.objects.filter(coupon_id=coupon.pk).annotate(**extra).first()
    if row is None or not _seal_holds(row):
        return None
    if not hmac.compare_digest(row.digest_now, row.prefix_digest):
        return None
    operations = list(with_journal(CouponOperation.objects.filter(
        coupon_id=coupon.pk, to_version__gte=row.through_version).order_by("to_version")))
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


def remember(coupon, *, previous_version: int | None, replayed: Replayed, head_hash: str,
             marks: dict) -> None:
    """Store (or move forward) the watermark after a check that held. Nothing is written when
    the check verified no new row."""
    if replayed.version == 0 or replayed.version == previous_version:
        return
    snapshot = {"replayed": replayed.as_json(), "marks": marks}
    digest = prefix_digest(coupon.pk, replayed.version)
    row = CheckWatermark(
        coupon_id=coupon.pk, through_version=replayed.version, head_hash=head_hash,
        prefix_digest=digest, snapshot=snapshot, verified_at=clock.now(),
        seal=watermark_seal(coupon.pk, replayed.version, head_hash, digest, snapshot))
    # Two checks at once both write; either watermark is true, so the last one stays.
    CheckWatermark.objects.bulk_create(
        [row], update_conflicts=True, unique_fields=["coupon"],
        update_fields=["through_version", "head_hash", "prefix_digest", "snapshot",
                       "verified_at", "seal"])

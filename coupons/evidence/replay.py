"""Replay a coupon's ledger and test it against the invariants (docs/design.md)."""

from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from coupons import after_sale
from coupons.evidence import check_watermark
from coupons.evidence.check_watermark import Mark, Replayed, Resume, entry_hash
from coupons.evidence.checkpoint_keys import verifying_key
from coupons.evidence.journal import with_journal
from coupons.evidence.journal_check import coupon_journal_problems, row_problems
from coupons.evidence.pruned import outbox_pruned_before
from coupons.evidence.signed_coverage import covered_prefix, signed_size
from coupons.models import (
    CouponLock,
    CouponOperation,
    CouponStatus,
    InboxMessage,
    LockStatus,
    OperationType,
)
from coupons.services.reversals import reversal_targets
from coupons.write.transitions import is_allowed

# Problems name operations and states by their codes (LOCK, AVAILABLE, v7): those stay English.
INVARIANTS = {
    1: gettext_lazy("a coupon has at most one active lock"),
    2: gettext_lazy("a coupon has at most one successful redemption"),
    3: gettext_lazy("an old lock token never changes a newer lease"),
    4: gettext_lazy("every state change raises state_version by exactly one"),
    5: gettext_lazy("every successful command has exactly one ledger row"),
    6: gettext_lazy("a return references the original redemption and a refund decision with a "
                    "policy version"),
    7: gettext_lazy("replaying the ledger gives the coupon's current state and version"),
    8: gettext_lazy("every inbox message about the coupon's orders is the fold of its journal "
                    "entries"),
    9: gettext_lazy("every evidence row of the coupon (ledger row, redemption, order binding, "
                    "refusal, note, view record, refund decision, compensation, conflict case, "
                    "reconciliation finding) is the fold of its journal entries"),
}
LEASE_BOUND = {OperationType.RENEW, OperationType.REDEEM, OperationType.RELEASE}
LEASE_ENDING = {
    OperationType.REDEEM, OperationType.RELEASE, OperationType.VOID, OperationType.REVERSE,
}
# The lease held before the newest rows, when the check read only those: the first row bound
# to a lease names it.
UNREAD = object()


@dataclass
class CheckReport:
    coupon_id: int
    replayed_state: str | None = None
    replayed_version: int = 0
    violations: dict[int, list[str]] = field(default_factory=dict)
    # What holds but a reader should know.
    notes: list[str] = field(default_factory=list)
    # The distinct (operation, from state, to state) steps of the ledger, for the console's
    # state diagram: the replay has them, so the page reads the ledger once.
    steps_taken: set[tuple[str, str, str]] = field(default_factory=set)
    # The newest verified checkpoint, which the check rests on: the page shows its coverage
    # without reading it again.
    checkpoint: object = None
    # The newest version whose ledger row that checkpoint signed (with every one before it),
    # or None.
    covered_version: int | None = None
    # False: the check read only the newest rows (COUPON_CHECK_NEWEST_ROWS) and left the
    # older ones no signed head covers to the full check; then, when that is the ledger, it
    # verified the ledger up to `verified_up_to` (0: none of it, earlier checks included) and
    # read it from `read_from_version` on.
    complete: bool = True
    verified_up_to: int | None = None
    read_from_version: int | None = None

    def fail(self, invariant: int, message: str) -> None:
        self.violations.setdefault(invariant, []).append(message)

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict:
        return {
            "coupon_id": self.coupon_id,
            "ok": self.ok,
            "replayed_state": self.replayed_state,
            "replayed_version": self.replayed_version,
            "invariants": [
                {"number": number, "rule": str(rule), "ok": number not in self.violations,
                 "problems": self.violations.get(number, [])}
                for number, rule in INVARIANTS.items()
            ],
            "notes": self.notes,
            "complete": self.complete,
            "verified_up_to": self.verified_up_to,
            "read_from_version": self.read_from_version,
        }


def coupon_check(coupon, *, full: bool = False) -> CheckReport:
    """The invariants over the coupon's whole history. Unless `full`, it resumes after the last
    version a check verified and the newest verified signed head covers (coupons/evidence/
    check_watermark.py) and reads the rows after it; a watermark it cannot trust makes it
    start from the first row. Unless `full`, it reads at most the newest
    COUPON_CHECK_NEWEST_ROWS rows that no signed head covers: a view's cost does not grow with
    a history nobody vouches for yet, and the report says how far it verified."""
    key = verifying_key()
    row = None if full else check_watermark.stored(coupon, key)
    checkpoint = check_watermark.newest_verified(row, key)
    signed = signed_size(checkpoint)
    newest = None if full else settings.COUPON_CHECK_NEWEST_ROWS
    resume = check_watermark.resume_point(coupon, row, signed, newest=newest)
    report = CheckReport(coupon_id=coupon.pk, checkpoint=checkpoint)
    if resume is None:
        operations, report.complete = check_watermark.ledger_tail(
            coupon, since=0, newest=newest, signed=signed)
    else:
        operations, report.complete = resume.operations, resume.complete
    mark = None
    if not report.complete:
        replayed = _check_newest(report, coupon, operations, resume, signed)
    elif resume is None:
        replayed, mark = _check_all(report, coupon, operations, signed)
    else:
        replayed, mark = _check_since(report, coupon, resume, signed)
    report.steps_taken = replayed.steps
    if report.complete:
        report.covered_version = mark.version if mark else (resume and resume.through_version)
    # The ledger rows the replay read (all of them, or those after the watermark).
    for problem in row_problems(operations):
        report.fail(9, problem)
    journal = coupon_journal_problems(
        coupon.pk, None if resume is None else resume.marks.get("journal"), signed,
        newest=newest)
    for problem in journal.problems:
        report.fail(9, problem)
    for invariant, problem in journal.tail:
        report.fail(invariant, problem)
    if report.complete and report.ok:
        check_watermark.remember(coupon, previous=resume, mark=mark,
                                 marks={"journal": journal.marks}, signed=signed)
    _say_what_was_read(report, journal.unread)
    return report


def _say_what_was_read(report: CheckReport, unread_evidence: int) -> None:
    if report.verified_up_to is not None:
        report.notes.append(_(
            "Verified up to v%(verified)s and from v%(read_from)s on: this check read the "
            "newest ledger rows, which no signed checkpoint covers yet; the %(count)s between "
            "are verified by the background check (manage.py coupon_check --full), not on "
            "each view.") % {"verified": report.verified_up_to,
                             "read_from": report.read_from_version,
                             "count": report.read_from_version - report.verified_up_to - 1})
    if unread_evidence:
        report.complete = False
        report.notes.append(ngettext(
            "%(count)s older evidence row of this coupon (order bindings, refusals, notes, "
            "view records, after-sale rows) is verified by the background check, not on each "
            "view.",
            "%(count)s older evidence rows of this coupon (order bindings, refusals, notes, "
            "view records, after-sale rows) are verified by the background check, not on each "
            "view.", unread_evidence) % {"count": unread_evidence})


def _replay_marking(report: CheckReport, operations, replayed: Replayed, by_id: dict,
                    signed: int):
    """_replay, and the Mark after the last of `operations` the signed head covers (with all
    before it): where the next check may resume. None when it covers none of them."""
    covered = covered_prefix(operations, signed)
    replayed = _replay(report, operations[:covered], replayed, by_id)
    mark = Mark(version=replayed.version, head_hash=entry_hash(operations[covered - 1]),
                replayed=replayed.as_json()) if covered else None
    return _replay(report, operations[covered:], replayed, by_id), mark


def _check_all(report: CheckReport, coupon, operations, signed: int):
    """Every row of the ledger (`operations`, read by ledger_tail)."""
    replayed, mark = _replay_marking(report, operations, Replayed(),
                                     {op.pk: op for op in operations}, signed)
    # With each lock its order binding, whose order _check_inbox reads: no query of its own.
    locks = list(CouponLock.objects.filter(coupon=coupon).select_related("order_coupon"))
    redemptions = list(coupon.redemptions.all())
    _check_row(report, coupon, [lock for lock in locks if lock.status == LockStatus.ACTIVE],
               [r for r in redemptions if r.succeeded])
    redeemed = {op.lock_id for op in operations if op.op_type == OperationType.REDEEM}
    _check_evidence(report, operations, replayed, locks, redemptions, redeemed)
    _check_inbox(report, operations, locks)
    after_sale.check_returns(report, coupon, operations)
    return replayed, mark


def _check_since(report: CheckReport, coupon, resume: Resume, signed: int):
    """The rows after the watermark: their replay from its state, their evidence; the coupon
    row, its active lease and its redemptions that count now."""
    operations = resume.operations
    by_id = {**resume.originals, **{op.pk: op for op in operations}}
    replayed, mark = _replay_marking(report, operations, resume.replayed, by_id, signed)
    new_locks = [op.lock_id for op in operations if op.op_type == OperationType.LOCK]
    locks = list(CouponLock.objects.filter(coupon=coupon, pk__in=new_locks)
                 .select_related("order_coupon")) if new_locks else []
    # The leases these rows redeemed or returned, and every redemption that counts now: one
    # that counts without the ledger saying so shows, whatever its age.
    redemptions = list(coupon.redemptions.filter(Q(lock_id__in=replayed.touched)
                                                 | Q(succeeded=True))
                       ) if replayed.touched or resume.successful else []
    active = list(coupon.locks.filter(status=LockStatus.ACTIVE)) if resume.active_locks else []
    _check_row(report, coupon, active, [r for r in redemptions if r.succeeded])
    # Leases with a REDEEM row: among the rows read, and every one that counts now.
    redeemed = {op.lock_id for op in by_id.values()
                if op.op_type == OperationType.REDEEM} | replayed.counted
    _check_evidence(report, operations, replayed, locks, redemptions, redeemed)
    _check_inbox(report, operations, locks)
    after_sale.check_returns(report, coupon, [*resume.originals.values(), *operations])
    return replayed, mark


def _check_newest(report: CheckReport, coupon, operations, resume: Resume | None,
                  signed: int):
    """The newest rows alone (`operations`), when more that no signed head covers follow the
    watermark (`resume`, or None: from the first row) than a view reads: their replay from the
    state the first of them starts at, their evidence; the coupon row, its active lease and its
    redemptions that count now. The rows between are the full check's."""
    verified = resume.through_version if resume else 0
    report.verified_up_to, report.read_from_version = verified, operations[0].to_version
    covered = covered_prefix(operations, signed)
    report.covered_version = operations[covered - 1].to_version if covered else verified or None
    originals = check_watermark.originals(coupon, operations)
    by_id = {**originals, **{op.pk: op for op in operations}}
    first = operations[0]
    replayed = _replay(report, operations, Replayed(state=first.from_state or None,
                                                    version=first.from_version,
                                                    current_lock=UNREAD), by_id)
    # The redemptions these rows redeemed or returned, and every one that counts now, each
    # with whether a REDEEM row of the ledger names its lease, wherever that row is. With a
    # watermark, its counts of them and of the active leases spare a query when they are none.
    redemptions = list(coupon.redemptions.filter(Q(lock_id__in=replayed.touched)
                                                 | Q(succeeded=True))
                       .annotate(has_redeem=Exists(CouponOperation.objects.filter(
                           coupon=coupon, op_type=OperationType.REDEEM,
                           lock_id=OuterRef("lock_id"))))
                       ) if replayed.touched or resume is None or resume.successful else []
    # A redemption these rows did not touch counts as the rows not read left it.
    replayed.counted |= {r.lock_id for r in redemptions
                         if r.lock_id not in replayed.touched and r.succeeded and r.has_redeem}
    active = list(coupon.locks.filter(status=LockStatus.ACTIVE).select_related("order_coupon")
                  ) if resume is None or resume.active_locks else []
    _check_row(report, coupon, active, [r for r in redemptions if r.succeeded])
    redeemed = {op.lock_id for op in by_id.values() if op.op_type == OperationType.REDEEM} \
        | {r.lock_id for r in redemptions if r.has_redeem}
    # The leases of these rows' LOCKs are theirs by id: no lease to hold against them.
    _check_evidence(report, operations, replayed, [], redemptions, redeemed)
    _check_inbox(report, operations, active)
    after_sale.check_returns(report, coupon, [*originals.values(), *operations])
    return replayed


def _replay(report: CheckReport, operations, replayed: Replayed, by_id: dict) -> Replayed:
    """Replays state and version from `replayed` (the state before `operations`), and which
    leases' redemptions count now, as REDEEM, RETURN and their reversals left them."""
    state, version, current_lock = replayed.state, replayed.version, replayed.current_lock
    for op in operations:
        step = f"{op.op_type} v{op.from_version}→v{op.to_version}"
        if op.to_version != op.from_version + 1:
            report.fail(4, _("%(step)s does not raise the version by exactly one") % {"step": step})
        if op.from_version != version:
            report.fail(4, _("%(step)s follows v%(version)s: the ledger has a gap")
                        % {"step": step, "version": version})
        if op.op_type == OperationType.ISSUE:
            if state is not None:
                report.fail(7, _("%(step)s: a second ISSUE") % {"step": step})
        elif (op.from_state or None) != state or not is_allowed(op.op_type, state, op.to_state):
            report.fail(7, _("%(step)s: %(from)s→%(to)s does not follow %(state)s")
                        % {"step": step, "from": op.from_state, "to": op.to_state,
                           "state": state})
        if op.op_type in LEASE_BOUND and current_lock is UNREAD:
            current_lock = op.lock_id  # taken in a row this check did not read
        elif op.op_type in LEASE_BOUND and op.lock_id != current_lock:
            report.fail(3, _("%(step)s was made with lock %(lock)s, not the current lease")
                        % {"step": step, "lock": op.lock_id})
        if op.op_type == OperationType.LOCK:
            current_lock = op.lock_id
            replayed.locks += 1
        elif op.op_type in LEASE_ENDING:
            current_lock = None
        original = by_id.get(op.original_operation_id)
        if op.op_type == OperationType.RETURN and (
            original is None or original.op_type != OperationType.REDEEM
        ):
            report.fail(6, _("%(step)s does not reference the original redemption")
                        % {"step": step})
        if op.op_type == OperationType.REVERSE:
            _check_reversal(report, step, op, original)
        _count_redemption(replayed, op, original, by_id)
        replayed.steps.add((op.op_type, op.from_state, op.to_state))
        state, version = op.to_state, op.to_version
    replayed.state, replayed.version, replayed.current_lock = state, version, current_lock
    report.replayed_state, report.replayed_version = state, version
    return replayed


def _check_reversal(report: CheckReport, step: str, op, original) -> None:
    """A REVERSE names an earlier operation of this coupon, starts from the state that
    operation left and lands on the state before it (coupons.services.reversals)."""
    if original is None or original.to_version >= op.to_version:
        report.fail(7, _("%(step)s does not name an earlier operation of this coupon")
                    % {"step": step})
    elif op.from_state != original.to_state or op.to_state not in reversal_targets(original):
        report.fail(7, _("%(step)s goes %(from)s→%(to)s, which does not undo %(original)s "
                         "%(original_from)s→%(original_to)s")
                    % {"step": step, "from": op.from_state, "to": op.to_state,
                       "original": original.op_type, "original_from": original.from_state,
                       "original_to": original.to_state})


def _count_redemption(replayed: Replayed, op, original, by_id) -> None:
    counts, lock = None, None
    if op.op_type == OperationType.REDEEM:
        counts, lock = True, op.lock_id
        replayed.redeems += 1
    elif op.op_type == OperationType.RETURN and original is not None:
        counts, lock = False, original.lock_id
    elif op.op_type == OperationType.REVERSE and original is not None:
        if original.op_type == OperationType.REDEEM:
            counts, lock = False, original.lock_id
        elif original.op_type == OperationType.RETURN:
            redeem = by_id.get(original.original_operation_id)
            if redeem is not None:
                counts, lock = True, redeem.lock_id
    if counts is None:
        return
    replayed.touched.add(lock)
    if counts:
        replayed.counted.add(lock)
    else:
        replayed.counted.discard(lock)


def _check_row(report: CheckReport, coupon, active: list, successful: list) -> None:
    """The coupon row against the replay, its `active` locks and `successful` redemptions."""
    if (report.replayed_state, report.replayed_version) != (coupon.status, coupon.state_version):
        report.fail(
            7, _("ledger replays to %(replayed_state)s v%(replayed_version)s, row says "
                 "%(state)s v%(version)s")
            % {"replayed_state": report.replayed_state,
               "replayed_version": report.replayed_version,
               "state": coupon.status, "version": coupon.state_version},
        )
    if len(active) > 1:
        report.fail(1, ngettext("%(count)s active lock", "%(count)s active locks", len(active))
                       % {"count": len(active)})
    if coupon.status == CouponStatus.LOCKED:
        lock = active[0] if len(active) == 1 else None
        if lock is None or lock.pk != coupon.current_lock_id:
            report.fail(1, _("LOCKED without its current lock being the one active lock"))
        elif (lock.order_id, lock.token_hash) != (coupon.locked_order_id, coupon.lock_token_hash):
            report.fail(3, _("the coupon's lease binding differs from its active lock"))
    elif active:
        report.fail(1, _("%(state)s but a lock is still active") % {"state": coupon.status})
    if len(successful) > 1:
        report.fail(2, ngettext("%(count)s successful redemption",
                                "%(count)s successful redemptions", len(successful))
                       % {"count": len(successful)})
    if coupon.status == CouponStatus.USED and len(successful) != 1:
        report.fail(2, _("USED without exactly one successful redemption"))


def _check_evidence(report: CheckReport, operations, replayed, locks, redemptions,
                    redeemed: set) -> None:
    """Every command among `operations` has its outbox event, every one of `locks` its LOCK
    row, and every one of `redemptions` its REDEEM row (`redeemed`: leases that have one) and
    the success the ledger gives it."""
    # Read with each row (check_watermark.ledger_tail).
    missing = [op for op in operations if not op.has_event]
    if missing:
        # Retention removes published events: one older than a prune's cutoff may be gone.
        pruned_before = outbox_pruned_before()
        for op in missing:
            if not (pruned_before and op.created_at < pruned_before):
                report.fail(5, _("%(op)s v%(version)s has no outbox event")
                            % {"op": op.op_type, "version": op.to_version})
    locked_by_op = {op.lock_id for op in operations if op.op_type == OperationType.LOCK}
    for lock in locks:
        if lock.pk not in locked_by_op:
            report.fail(5, _("lock %(lock)s has no LOCK ledger row") % {"lock": lock.pk})
    for redemption in redemptions:
        if redemption.lock_id not in redeemed:
            report.fail(5, _("redemption %(redemption)s has no REDEEM ledger row")
                        % {"redemption": redemption.pk})
        elif redemption.succeeded != (redemption.lock_id in replayed.counted):
            report.fail(2, _("redemption %(redemption)s has succeeded=%(succeeded)s, but the "
                             "ledger's REDEEM, RETURN and REVERSE rows say otherwise")
                        % {"redemption": redemption.pk, "succeeded": redemption.succeeded})


def _check_inbox(report: CheckReport, operations, locks) -> None:
    """The inbox messages about the orders these rows and `locks` name, each the fold of its
    journal entries (received, then processed)."""
    bindings = [lock.order_coupon for lock in locks if hasattr(lock, "order_coupon")]
    orders = {op.order_id for op in operations if op.order_id} | {b.order_id for b in bindings}
    if orders:
        messages = with_journal(InboxMessage.objects.filter(order_id__in=orders).order_by("pk"))
        for problem in row_problems(messages):
            report.fail(8, problem)

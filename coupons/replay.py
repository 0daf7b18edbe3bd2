"""Replay a coupon's ledger and test it against the invariants of SPEC §8."""

from dataclasses import dataclass, field

from django.db.models import Max
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from coupons import after_sale
from coupons.ledger_chain import chain_breaks
from coupons.models import (
    CommandRejection,
    CouponLock,
    CouponStatus,
    InboxMessage,
    LockStatus,
    OperationType,
    OutboxEvent,
    PruneRun,
    UnkeyedLedgerPrefix,
)
from coupons.seals import broken_seals, seal_problem
from coupons.services.reversals import reversal_targets
from coupons.services.transitions import is_allowed

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
    8: gettext_lazy("every sealed evidence row (order binding, redemption, refusal, inbox "
                    "message, refund decision, compensation) is as it was written"),
}
LEASE_BOUND = {OperationType.RENEW, OperationType.REDEEM, OperationType.RELEASE}
LEASE_ENDING = {
    OperationType.REDEEM, OperationType.RELEASE, OperationType.VOID, OperationType.REVERSE,
}


@dataclass
class CheckReport:
    coupon_id: int
    replayed_state: str | None = None
    replayed_version: int = 0
    violations: dict[int, list[str]] = field(default_factory=dict)
    # What holds but a reader should know (rows written before the chain was keyed).
    notes: list[str] = field(default_factory=list)

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
        }


def coupon_check(coupon) -> CheckReport:
    report = CheckReport(coupon_id=coupon.pk)
    operations = list(coupon.operations.order_by("to_version"))
    counted = _replay(report, operations)
    # A row edited behind the database's triggers replays to nothing we can trust.
    problems, report.notes = chain_breaks(operations, _unkeyed_prefix(coupon, operations))
    for problem in problems:
        report.fail(7, problem)
    _check_row(report, coupon)
    locks = _check_evidence(report, coupon, operations, counted)
    _check_seals(report, coupon, operations, locks)
    after_sale.check_returns(report, coupon, operations)
    return report


def _unkeyed_prefix(coupon, operations):
    """Read only for a coupon with rows written before the chain was keyed (or forged so)."""
    if all(op.chain_key_id for op in operations):
        return None
    return UnkeyedLedgerPrefix.objects.filter(coupon_id=coupon.pk).first()


def _replay(report: CheckReport, operations) -> dict:
    """Replays state and version; answers whether each lease's redemption counts now
    ({lock id: bool}), as REDEEM, RETURN and their reversals left it."""
    state, version, current_lock = None, 0, None
    by_id = {op.pk: op for op in operations}
    counted = {}
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
        if op.op_type in LEASE_BOUND and op.lock_id != current_lock:
            report.fail(3, _("%(step)s was made with lock %(lock)s, not the current lease")
                        % {"step": step, "lock": op.lock_id})
        if op.op_type == OperationType.LOCK:
            current_lock = op.lock_id
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
        _count_redemption(counted, op, original, by_id)
        state, version = op.to_state, op.to_version
    report.replayed_state, report.replayed_version = state, version
    return counted


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


def _count_redemption(counted: dict, op, original, by_id) -> None:
    if op.op_type == OperationType.REDEEM:
        counted[op.lock_id] = True
    elif op.op_type == OperationType.RETURN and original is not None:
        counted[original.lock_id] = False
    elif op.op_type == OperationType.REVERSE and original is not None:
        if original.op_type == OperationType.REDEEM:
            counted[original.lock_id] = False
        elif original.op_type == OperationType.RETURN:
            redeem = by_id.get(original.original_operation_id)
            if redeem is not None:
                counted[redeem.lock_id] = True


def _check_row(report: CheckReport, coupon) -> None:
    if (report.replayed_state, report.replayed_version) != (coupon.status, coupon.state_version):
        report.fail(
            7, _("ledger replays to %(replayed_state)s v%(replayed_version)s, row says "
                 "%(state)s v%(version)s")
            % {"replayed_state": report.replayed_state,
               "replayed_version": report.replayed_version,
               "state": coupon.status, "version": coupon.state_version},
        )
    active = list(coupon.locks.filter(status=LockStatus.ACTIVE))
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
    successful = list(coupon.redemptions.filter(succeeded=True))
    if len(successful) > 1:
        report.fail(2, ngettext("%(count)s successful redemption",
                                "%(count)s successful redemptions", len(successful))
                       % {"count": len(successful)})
    if coupon.status == CouponStatus.USED and len(successful) != 1:
        report.fail(2, _("USED without exactly one successful redemption"))


def _check_evidence(report: CheckReport, coupon, operations, counted) -> list:
    """Every command's ledger row and outbox event; answers the coupon's locks."""
    op_ids = [op.pk for op in operations]
    with_event = set(
        OutboxEvent.objects.filter(operation_id__in=op_ids).values_list("operation_id", flat=True)
    )
    # Retention removes published events: one older than a prune's cutoff may be gone.
    pruned_before = PruneRun.objects.aggregate(before=Max("outbox_before"))["before"]
    for op in operations:
        if op.pk not in with_event and not (pruned_before and op.created_at < pruned_before):
            report.fail(5, _("%(op)s v%(version)s has no outbox event")
                        % {"op": op.op_type, "version": op.to_version})
    locked_by_op = {op.lock_id for op in operations if op.op_type == OperationType.LOCK}
    # With each lock its order binding, whose seal _check_seals tests: no query of its own.
    locks = list(CouponLock.objects.filter(coupon=coupon).select_related("order_coupon"))
    for lock in locks:
        if lock.pk not in locked_by_op:
            report.fail(5, _("lock %(lock)s has no LOCK ledger row") % {"lock": lock.pk})
    redeemed_by_op = {op.lock_id for op in operations if op.op_type == OperationType.REDEEM}
    for redemption in coupon.redemptions.all():
        if (problem := seal_problem(redemption)) is not None:
            report.fail(8, _("redemption %(redemption)s %(problem)s")
                        % {"redemption": redemption.pk, "problem": problem})
        if redemption.lock_id not in redeemed_by_op:
            report.fail(5, _("redemption %(redemption)s has no REDEEM ledger row")
                        % {"redemption": redemption.pk})
        elif redemption.succeeded != counted[redemption.lock_id]:
            report.fail(2, _("redemption %(redemption)s has succeeded=%(succeeded)s, but the "
                             "ledger's REDEEM, RETURN and REVERSE rows say otherwise")
                        % {"redemption": redemption.pk, "succeeded": redemption.succeeded})
    return locks


def _check_seals(report: CheckReport, coupon, operations, locks) -> None:
    """The coupon's order bindings, refusals and the inbox messages about its orders."""
    bindings = [lock.order_coupon for lock in locks if hasattr(lock, "order_coupon")]
    orders = {op.order_id for op in operations if op.order_id} | {b.order_id for b in bindings}
    rows = [*bindings, *CommandRejection.objects.filter(coupon_id_ref=coupon.pk)]
    if orders:
        rows += InboxMessage.objects.filter(order_id__in=orders)
    for problem in [*broken_seals(rows), *after_sale.broken_seals(coupon)]:
        report.fail(8, problem)

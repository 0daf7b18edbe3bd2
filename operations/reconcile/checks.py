"""The six checks of reconciliation (docs/operating.md), over one batch of coupons at a time.

Each batch costs a fixed number of queries, each bounded by the batch (its coupons, their
ledger rows, bindings, redemptions, refund decisions, and the facts of the orders bound to
them), so a run over any number of coupons holds one batch in memory. Pure reads: what they
find is recorded by operations.reconcile.run, repaired only by an operator.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Max

from coupons import clock
from coupons.evidence.pruned import outbox_pruned_before
from coupons.models import (
    CaseStatus,
    ConflictCase,
    CouponOperation,
    CouponStatus,
    FactType,
    FindingKind,
    OperationType,
    OrderCoupon,
    OrderFact,
    OutboxEvent,
    Redemption,
    Repair,
    Severity,
)
from operations.reconcile.summaries import summary
from refunds.models import Compensation, RefundCoupon

PAYMENT_FACTS = (FactType.PAYMENT_SUCCEEDED, FactType.FINAL_PAYMENT_SUCCEEDED)
ENDING_FACTS = (FactType.ORDER_CLOSED, FactType.PAYMENT_FAILED)
COUPON_FIELDS = ("id", "status", "state_version", "locked_order_id", "current_lock_id",
                 "current_lock__locked_at")
# Ledger gaps listed in a finding's evidence: enough to start reading, bounded in size.
MAX_GAPS_SHOWN = 10


@dataclass(frozen=True)
class Detected:
    """One fault as a check saw it; (kind, coupon_id, subject) names it across runs."""

    kind: str
    severity: str
    coupon_id: int
    summary: str
    repair: str
    subject: str = ""
    order_ids: tuple = ()
    evidence: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple:
        return (self.kind, self.coupon_id, self.subject)


@dataclass
class Batch:
    """What the checks read about one batch of coupons, grouped by coupon id."""

    coupons: list[dict]
    versions: dict = field(default_factory=lambda: defaultdict(list))
    bindings: dict = field(default_factory=lambda: defaultdict(list))
    redemptions: dict = field(default_factory=lambda: defaultdict(list))
    decisions: dict = field(default_factory=lambda: defaultdict(list))
    settled: set = field(default_factory=set)  # (coupon_id, order_id) a person took over
    facts: dict = field(default_factory=lambda: defaultdict(dict))  # order → type → payment
    fact_times: dict = field(default_factory=dict)  # (order, type) → last recorded
    latest_binding: dict = field(default_factory=dict)  # order → its newest binding's id
    return_events: dict = field(default_factory=dict)  # RETURN operation id → outbox row
    reversed_ops: set = field(default_factory=set)  # operations an approved REVERSE undid
    # RETURN operations older than a prune's outbox cutoff: a missing event was published and
    # then removed by retention, not lost.
    pruned_ops: set = field(default_factory=set)
    deposits: dict = field(default_factory=lambda: defaultdict(list))  # coupon → orders unbound
    deposit_cases: dict = field(default_factory=dict)  # (coupon, order) → (case id, status)


def load_batch(coupons: list[dict]) -> Batch:
    """`coupons` in id order. Related rows are read by the batch's id range, not an IN list
    of its ids: the database walks one index range, and Django need not prepare a thousand
    parameters per query (most of a run's time when it did). A coupon inserted inside the
    range meanwhile only adds rows no check looks at."""
    batch = Batch(coupons)
    of_coupons = coupon_range(coupons)
    for coupon_id, from_version, to_version, op_type, original_id in (
        CouponOperation.objects.filter(**of_coupons)
        .order_by("coupon_id", "to_version")
        .values_list("coupon_id", "from_version", "to_version", "op_type",
                     "original_operation_id")
    ):
        batch.versions[coupon_id].append((from_version, to_version))
        if op_type == OperationType.REVERSE:
            batch.reversed_ops.add(original_id)
    bindings = OrderCoupon.objects.filter(**of_coupons)
    for binding in bindings.values("id", "coupon_id", "order_id", "lock_id").order_by("id"):
        batch.bindings[binding["coupon_id"]].append(binding)
    # An order that switched coupons at checkout pays with its newest binding only (the
    # payment handler redeems that one), so only that binding makes the coupon the order's.
    batch.latest_binding = dict(
        OrderCoupon.objects.filter(order_id__in=bindings.values("order_id"))
        .values("order_id").annotate(latest=Max("id")).values_list("order_id", "latest")
    )
    for redemption in Redemption.objects.filter(**of_coupons).values(
        "id", "coupon_id", "order_id", "lock_id", "succeeded"
    ).order_by("id"):
        batch.redemptions[redemption["coupon_id"]].append(redemption)
    for decision in RefundCoupon.objects.filter(
        **of_coupons, executed_action=RefundCoupon.Action.RETURN
    ).values("id", "coupon_id", "order_id", "refund_id", "status", "redemption_id",
             "operation_id").order_by("id"):
        batch.decisions[decision["coupon_id"]].append(decision)
    batch.settled = set(
        ConflictCase.objects.filter(**of_coupons)
        .values_list("coupon_id", "order_id")
    ) | set(
        Compensation.objects.filter(**of_coupons).exclude(order_id="")
        .values_list("coupon_id", "order_id")
    )
    for order_id, fact_type, payment_id, recorded_at in OrderFact.objects.filter(
        order_id__in=bindings.values("order_id"),
        fact_type__in=(*PAYMENT_FACTS, *ENDING_FACTS, FactType.DEPOSIT_PAID),
    ).values_list("order_id", "fact_type", "payment_id", "recorded_at").order_by("id"):
        batch.facts[order_id].setdefault(fact_type, payment_id)
        batch.fact_times[order_id, fact_type] = max(
            recorded_at, batch.fact_times.get((order_id, fact_type), recorded_at))
    operation_ids = [d["operation_id"] for rows in batch.decisions.values() for d in rows
                     if d["operation_id"] is not None]
    for event in OutboxEvent.objects.filter(operation_id__in=operation_ids).values(
        "id", "operation_id", "created_at", "published_at"
    ):
        batch.return_events[event["operation_id"]] = event
    without_event = set(operation_ids) - set(batch.return_events)
    pruned_before = outbox_pruned_before()
    if without_event and pruned_before is not None:
        batch.pruned_ops = set(CouponOperation.objects.filter(
            pk__in=without_event, created_at__lt=pruned_before).values_list("pk", flat=True))
    load_unbound_deposits(batch, coupons)
    return batch


def load_unbound_deposits(batch: Batch, coupons: list[dict]) -> None:
    """Deposits that named a coupon of the batch for an order that holds no binding: the
    presale whose lock was refused. A closed order's deposit holds nothing (its handler
    ignores it)."""
    claims = dict(OrderFact.objects.filter(
        fact_type=FactType.DEPOSIT_PAID, payload__coupon_id__gte=coupons[0]["id"],
        payload__coupon_id__lte=coupons[-1]["id"],
    ).values_list("order_id", "payload__coupon_id"))
    if not claims:
        return
    held = set(OrderCoupon.objects.filter(order_id__in=claims).values_list("order_id", flat=True))
    closed = set()
    for order_id, fact_type, payment_id in OrderFact.objects.filter(
        order_id__in=claims, fact_type__in=(*PAYMENT_FACTS, FactType.ORDER_CLOSED)
    ).values_list("order_id", "fact_type", "payment_id"):
        if fact_type == FactType.ORDER_CLOSED:
            closed.add(order_id)
        else:
            batch.facts[order_id].setdefault(fact_type, payment_id)
    for order_id, coupon_id in sorted(claims.items()):
        if order_id not in held and order_id not in closed:
            batch.deposits[coupon_id].append(order_id)
    for case_id, coupon_id, order_id, status in ConflictCase.objects.filter(
        order_id__in=claims, fact_type=FactType.DEPOSIT_PAID
    ).values_list("id", "coupon_id", "order_id", "status").order_by("id"):
        batch.deposit_cases[coupon_id, order_id] = (case_id, status)


def coupon_range(coupons: list[dict]) -> dict:
    """Filter arguments for rows of the batch's coupons (a foreign key takes gte/lte, not
    range)."""
    return {"coupon_id__gte": coupons[0]["id"], "coupon_id__lte": coupons[-1]["id"]}


def check_batch(batch: Batch) -> list[Detected]:
    found = []
    for coupon in batch.coupons:
        for check in CHECKS:
            found.extend(check(batch, coupon))
    return found


def is_paid(batch: Batch, order_id: str) -> bool:
    return any(t in batch.facts.get(order_id, {}) for t in PAYMENT_FACTS)


def payment_of(batch: Batch, order_id: str) -> str:
    facts = batch.facts.get(order_id, {})
    return next((facts[t] for t in PAYMENT_FACTS if t in facts), "")


def bound_orders(batch: Batch, coupon_id: int) -> list[str]:
    """The orders whose newest binding is to this coupon, in binding order."""
    return [b["order_id"] for b in batch.bindings.get(coupon_id, [])
            if batch.latest_binding.get(b["order_id"]) == b["id"]]


# --- 1. a paid order used the coupon, which is still LOCKED / AVAILABLE ------------------

def paid_not_redeemed(batch: Batch, coupon: dict) -> list[Detected]:
    if coupon["status"] not in (CouponStatus.LOCKED, CouponStatus.AVAILABLE):
        return []
    redeemed_by = {r["order_id"] for r in batch.redemptions.get(coupon["id"], [])}
    found = []
    for order_id in bound_orders(batch, coupon["id"]):
        if (not is_paid(batch, order_id) or order_id in redeemed_by
                or (coupon["id"], order_id) in batch.settled):
            continue
        held_by_other = (coupon["status"] == CouponStatus.LOCKED
                         and coupon["locked_order_id"] != order_id)
        found.append(Detected(
            kind=FindingKind.PAID_NOT_REDEEMED, severity=Severity.P1, coupon_id=coupon["id"],
            subject=order_id, order_ids=(order_id,),
            repair=Repair.MANUAL_REVIEW if held_by_other else Repair.COMPENSATING_REDEEM,
            summary=summary("paid_held_by_other", order=order_id, state=coupon["status"],
                            holder=coupon["locked_order_id"]) if held_by_other
            else summary("paid_not_redeemed", order=order_id, state=coupon["status"]),
            evidence={"order_id": order_id, "payment_id": payment_of(batch, order_id),
                      "coupon_status": coupon["status"],
                      "coupon_version": coupon["state_version"],
                      "locked_order_id": coupon["locked_order_id"]},
        ))
    return found


# --- 2. the order closed without payment, the coupon still LOCKED for it ------------------

def closed_still_locked(batch: Batch, coupon: dict) -> list[Detected]:
    order_id = coupon["locked_order_id"]
    if coupon["status"] != CouponStatus.LOCKED or is_paid(batch, order_id):
        return []
    facts = batch.facts.get(order_id, {})
    # Only a fact heard after this lease began ends it: a declined card released an earlier
    # lease, and the order may have locked the coupon again to retry.
    ended = [t for t in ENDING_FACTS
             if t in facts and batch.fact_times[order_id, t] >= coupon["current_lock__locked_at"]]
    # A presale order's declined final payment may be retried until its deadline: only its
    # close ends it (the same rule as the PaymentFailed handler).
    if FactType.DEPOSIT_PAID in facts and FactType.ORDER_CLOSED not in facts:
        ended = []
    if not ended:
        return []
    return [Detected(
        kind=FindingKind.CLOSED_STILL_LOCKED, severity=Severity.P2, coupon_id=coupon["id"],
        subject=order_id, order_ids=(order_id,), repair=Repair.RELEASE,
        summary=summary("closed_still_locked", order=order_id, facts=", ".join(ended)),
        evidence={"order_id": order_id, "facts": ended, "lock_id": str(coupon["current_lock_id"]),
                  "coupon_version": coupon["state_version"]},
    )]


# --- 3. USED without exactly one redemption and its order binding: ghost ------------------

def ghost_redemption(batch: Batch, coupon: dict) -> list[Detected]:
    if coupon["status"] != CouponStatus.USED:
        return []
    live = [r for r in batch.redemptions.get(coupon["id"], []) if r["succeeded"]]
    bound = {(b["lock_id"], b["order_id"]) for b in batch.bindings.get(coupon["id"], [])}
    if len(live) == 1 and (live[0]["lock_id"], live[0]["order_id"]) in bound:
        return []
    return [Detected(
        kind=FindingKind.GHOST_REDEMPTION, severity=Severity.P0, coupon_id=coupon["id"],
        order_ids=tuple(sorted({r["order_id"] for r in live})), repair=Repair.MANUAL_REVIEW,
        summary=summary("ghost_redemptions", count=len(live)) if len(live) != 1
        else summary("ghost_unbound", order=live[0]["order_id"]),
        evidence={"redemption_ids": [r["id"] for r in live],
                  "coupon_version": coupon["state_version"]},
    )]


# --- 4. one coupon consumed by several paid orders -----------------------------------------

def double_consumption(batch: Batch, coupon: dict) -> list[Detected]:
    """Paid orders that still count the coupon's discount as theirs.

    An order stops counting once its redemption was returned or reversed, or once a person
    took its claim over (a conflict case or a compensation for that order and coupon).
    """
    redemptions = batch.redemptions.get(coupon["id"], [])
    undone = {r["order_id"] for r in redemptions if not r["succeeded"]}
    consuming = {r["order_id"] for r in redemptions if r["succeeded"]}
    for order_id in bound_orders(batch, coupon["id"]):
        if (is_paid(batch, order_id) and order_id not in undone
                and (coupon["id"], order_id) not in batch.settled):
            consuming.add(order_id)
    if len(consuming) < 2:
        return []
    orders = tuple(sorted(consuming))
    return [Detected(
        kind=FindingKind.DOUBLE_CONSUMPTION, severity=Severity.P0, coupon_id=coupon["id"],
        order_ids=orders, repair=Repair.MANUAL_REVIEW,
        summary=summary("double_consumption", count=len(orders), orders=", ".join(orders)),
        evidence={"orders": {o: payment_of(batch, o) for o in orders},
                  "coupon_status": coupon["status"]},
    )]


# --- 5. refund decision RETURN: state not advanced, or its event not published -------------

def return_not_advanced(batch: Batch, coupon: dict) -> list[Detected]:
    live = {r["id"] for r in batch.redemptions.get(coupon["id"], []) if r["succeeded"]}
    found = []
    for decision in batch.decisions.get(coupon["id"], []):
        returned = decision["operation_id"] is not None
        # An approved reversal of the RETURN makes the redemption count again, honestly.
        if returned and (decision["redemption_id"] not in live
                         or decision["operation_id"] in batch.reversed_ops):
            continue
        found.append(Detected(
            kind=FindingKind.RETURN_NOT_ADVANCED, severity=Severity.P1, coupon_id=coupon["id"],
            subject=f"refund-decision:{decision['id']}", order_ids=(decision["order_id"],),
            repair=Repair.REDRIVE_RETURN if decision["redemption_id"] else Repair.MANUAL_REVIEW,
            summary=summary("return_not_advanced", refund=decision["refund_id"],
                            status=decision["status"], state=coupon["status"]),
            evidence={"decision_id": decision["id"], "refund_id": decision["refund_id"],
                      "redemption_id": decision["redemption_id"],
                      "return_operation_id": decision["operation_id"],
                      "coupon_status": coupon["status"]},
        ))
    return found


def return_event_unpublished(batch: Batch, coupon: dict) -> list[Detected]:
    """The relay publishes within a second; an event older than the grace was not sent."""
    grace = timedelta(seconds=settings.COUPONS["RECONCILE_UNPUBLISHED_GRACE_SECONDS"])
    cutoff = clock.now() - grace
    found = []
    for decision in batch.decisions.get(coupon["id"], []):
        if decision["operation_id"] is None:
            continue  # not returned at all: return_not_advanced reports it
        event = batch.return_events.get(decision["operation_id"])
        if decision["operation_id"] in batch.pruned_ops:
            continue
        if event is not None and (event["published_at"] is not None
                                  or event["created_at"] > cutoff):
            continue
        found.append(Detected(
            kind=FindingKind.RETURN_EVENT_UNPUBLISHED, severity=Severity.P2,
            coupon_id=coupon["id"], subject=f"operation:{decision['operation_id']}",
            order_ids=(decision["order_id"],),
            repair=Repair.REDRIVE_EVENT if event is not None else Repair.MANUAL_REVIEW,
            summary=summary("return_unpublished", refund=decision["refund_id"],
                            since=event["created_at"].isoformat()) if event is not None
            else summary("return_no_event", refund=decision["refund_id"]),
            evidence={"decision_id": decision["id"], "operation_id": decision["operation_id"],
                      "event_id": event["id"] if event is not None else None},
        ))
    return found


# --- 6. ledger versions not contiguous: history bypassed -----------------------------------

def ledger_gap(batch: Batch, coupon: dict) -> list[Detected]:
    gaps, expected = [], 0
    for from_version, to_version in batch.versions.get(coupon["id"], []):
        if from_version != expected or to_version != from_version + 1:
            gaps.append(f"v{expected} expected, row v{from_version}→v{to_version}")
        expected = to_version
    if expected != coupon["state_version"]:
        gaps.append(f"ledger ends at v{expected}, coupon is v{coupon['state_version']}")
    if not gaps:
        return []
    return [Detected(
        kind=FindingKind.LEDGER_GAP, severity=Severity.P0, coupon_id=coupon["id"],
        repair=Repair.MANUAL_REVIEW,
        summary=summary("ledger_gap", count=len(gaps)),
        evidence={"gaps": gaps[:MAX_GAPS_SHOWN], "coupon_version": coupon["state_version"]},
    )]


# --- 7. a presale deposit named the coupon, which never became the order's ----------------

def deposit_not_bound(batch: Batch, coupon: dict) -> list[Detected]:
    """The order service counts on the discount the deposit named. Found while no person has
    decided the order's case (an open case is named in the evidence, not a reason to stay
    quiet: the order is still owed an answer)."""
    found = []
    for order_id in batch.deposits.get(coupon["id"], []):
        case_id, case_status = batch.deposit_cases.get((coupon["id"], order_id), (None, ""))
        if case_status and case_status != CaseStatus.OPEN:
            continue
        found.append(Detected(
            kind=FindingKind.DEPOSIT_NOT_BOUND, severity=Severity.P1, coupon_id=coupon["id"],
            subject=order_id, order_ids=(order_id,), repair=Repair.MANUAL_REVIEW,
            summary=summary("deposit_not_bound", order=order_id, state=coupon["status"]),
            evidence={"order_id": order_id, "paid": is_paid(batch, order_id),
                      "coupon_status": coupon["status"], "case_id": case_id,
                      "locked_order_id": coupon["locked_order_id"]},
        ))
    return found


CHECKS = [
    paid_not_redeemed, closed_still_locked, ghost_redemption, double_consumption,
    return_not_advanced, return_event_unpublished, ledger_gap, deposit_not_bound,
]

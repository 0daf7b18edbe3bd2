"""Reads of refund decisions."""

from dataclasses import dataclass

from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from coupons.diagnosis import RefundAnswer, RefundOutcome, Waiting
from coupons.errors import NotFound
from coupons.evidence.tips import with_journal_tip
from coupons.models import OrderCoupon
from coupons.write.payloads import iso, money
from refunds.models import Compensation, RefundCoupon


def decision_list() -> QuerySet[RefundCoupon]:
    return RefundCoupon.objects.select_related("policy_version__policy").order_by("-id")


def decision_get(*, decision_id) -> RefundCoupon:
    """With its `journal_tip`, read with the row (coupons.evidence.tips)."""
    decision = with_journal_tip(decision_list()).filter(pk=decision_id).first()
    if decision is None:
        raise NotFound(_("No such refund decision."), decision_id=decision_id)
    return decision


def order_used_a_coupon(order_id: str) -> bool:
    return OrderCoupon.objects.filter(order_id=order_id).exists()


def decision_payload(decision: RefundCoupon) -> dict:
    """Both decisions and their evidence, as the API and the Idempotency-Key store them."""
    version = decision.policy_version
    return {
        "id": decision.pk,
        "refund_id": decision.refund_id,
        "order_id": decision.order_id,
        "payment_id": decision.payment_id,
        "coupon_id": decision.coupon_id,
        "redemption_id": decision.redemption_id,
        "status": decision.status,
        "refund": {
            "amount": money(decision.refund_amount),
            "type": decision.refund_type,
            "risk_flag": decision.risk_flag,
            "received_at": iso(decision.received_at),
        },
        "money_decision": {
            "coupon_share": money(decision.coupon_share),
            "order_discount": money(decision.order_discount),
            "order_amount": money(decision.order_amount),
            "paid_amount": money(decision.paid_amount),
            "refunded_total": money(decision.refunded_total),
        },
        "coupon_decision": {
            "action": decision.action or None,
            "policy": version.policy.code if version else None,
            "policy_version": version.number if version else None,
            "rule_index": decision.rule_index,
            "rule_label": decision.rule_label,
            "requires_approval": decision.requires_approval,
            "compensation": decision.compensation,
            "facts": decision.facts,
            "decided_at": iso(decision.decided_at),
        },
        "executed_action": decision.executed_action or None,
        "operation_id": decision.operation_id,
        "compensation_coupon_id": decision.compensation_coupon_id,
        "compensation_id": decision.compensation_record_id,
        "review": {
            "by": decision.reviewed_by,
            "at": iso(decision.reviewed_at),
            "note": decision.review_note,
        },
        "reason": decision.reason,
        "created_by": decision.created_by,
    }


def decision_shown(decision: RefundCoupon) -> dict:
    """A read's answer: the payload and the version it shows (read `with_journal_tip`)."""
    return {**decision_payload(decision), "journal_tip": decision.journal_tip}


def pending_approval_counts() -> tuple[int, int]:
    """Refund decisions waiting for an operator, and compensations waiting for a second one."""
    return (RefundCoupon.objects.filter(status=RefundCoupon.Status.PENDING_APPROVAL).count(),
            Compensation.objects.filter(status=Compensation.Status.PROPOSED).count())


def waiting_on_people(coupon) -> Waiting:
    """The coupon's refund decisions waiting for approval and compensations waiting for a
    second operator, oldest first: what its diagnosis says is pending now."""
    return waiting_on_people_of([coupon])[coupon.pk]


def waiting_on_people_of(coupons) -> dict[int, Waiting]:
    """{coupon id: what waits for a person} for several coupons at once (a customer's): two
    queries whatever their number."""
    ids = [coupon.pk for coupon in coupons]
    decisions: dict[int, list] = {pk: [] for pk in ids}
    compensations: dict[int, list] = {pk: [] for pk in ids}
    for decision in RefundCoupon.objects.filter(
            coupon__in=ids, status=RefundCoupon.Status.PENDING_APPROVAL).order_by("id"):
        decisions[decision.coupon_id].append(decision)
    for compensation in Compensation.objects.filter(
            coupon__in=ids, status=Compensation.Status.PROPOSED).order_by("id"):
        compensations[compensation.coupon_id].append(compensation)
    return {pk: Waiting(decisions=decisions[pk], compensations=compensations[pk])
            for pk in ids}


def refund_answer(coupon) -> RefundAnswer | None:
    """"Do I get my coupon back?": the coupon's latest refund decision, as its diagnosis
    says it; None when no refund names the coupon."""
    decision = (RefundCoupon.objects.filter(coupon=coupon)
                .select_related("policy_version__policy")
                .order_by("-received_at", "-id").first())
    return None if decision is None else answer_of(decision)


# An executed decision's action → what happened to the coupon; any other action kept it used.
EXECUTED = {RefundCoupon.Action.RETURN: RefundOutcome.RETURNED,
            RefundCoupon.Action.RELEASE_LOCK: RefundOutcome.FREED,
            RefundCoupon.Action.VOID: RefundOutcome.VOIDED,
            RefundCoupon.Action.COMPENSATE: RefundOutcome.COMPENSATED}
WAITING = {RefundCoupon.Status.AWAITING_REDEMPTION: RefundOutcome.AWAITING_PAYMENT,
           RefundCoupon.Status.PENDING_APPROVAL: RefundOutcome.IN_REVIEW,
           RefundCoupon.Status.REJECTED: RefundOutcome.REJECTED}


def answer_of(decision: RefundCoupon) -> RefundAnswer:
    outcome = WAITING.get(decision.status) or EXECUTED.get(decision.executed_action,
                                                           RefundOutcome.STAYS_USED)
    version = decision.policy_version
    return RefundAnswer(
        decision=decision, order_id=decision.order_id, outcome=outcome,
        at=decision.reviewed_at or decision.decided_at or decision.received_at,
        policy=version.policy.code if version else None,
        policy_version=version.number if version else None)


@dataclass(frozen=True)
class CouponAfterSale:
    """What the coupon page says of after-sale: what waits for a person (the diagnosis), the
    latest refund decision and the order-discount compensations (the customer replies)."""

    waiting: Waiting
    latest_decision: RefundCoupon | None
    discount_compensations: list


def coupon_after_sale(coupon) -> CouponAfterSale:
    """Two queries: the decisions that wait with the latest one, and the compensations that
    wait with those paying back an order's discount (few per coupon: one per conflict case)."""
    latest = RefundCoupon.objects.filter(coupon=coupon).order_by("-received_at", "-id")
    decisions = RefundCoupon.objects.filter(coupon=coupon).filter(
        Q(status=RefundCoupon.Status.PENDING_APPROVAL) | Q(pk__in=latest.values("pk")[:1])) \
        .select_related("policy_version__policy").order_by("id")
    compensations = Compensation.objects.filter(coupon=coupon).filter(
        Q(status=Compensation.Status.PROPOSED)
        | Q(kind=Compensation.Kind.ORDER_DISCOUNT_REFUND)).order_by("id")
    return _after_sale(list(decisions), list(compensations))


def _after_sale(decisions: list, compensations: list) -> CouponAfterSale:
    return CouponAfterSale(
        waiting=Waiting(
            decisions=[d for d in decisions if d.status == RefundCoupon.Status.PENDING_APPROVAL],
            compensations=[c for c in compensations
                           if c.status == Compensation.Status.PROPOSED]),
        latest_decision=max(decisions, key=lambda d: (d.received_at, d.pk), default=None),
        discount_compensations=[c for c in compensations
                                if c.kind == Compensation.Kind.ORDER_DISCOUNT_REFUND])

"""Reads behind the operators' queues: conflict cases, refund approvals, compensations.

Each queue lists what waits first. Rows are dicts passed through `coupons.redaction.visible`,
so case notes, evidence and compensation amounts reach only holders of VIEW_CASE_DETAILS,
exactly as the API and the timeline show them.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.utils.translation import pgettext_lazy

from coupons.evidence.tips import with_journal_tip
from coupons.ledger_reasons import reason_words
from coupons.models import (
    CaseStatus,
    ConflictCase,
    CouponOperation,
    CouponTemplate,
    GoodwillProposal,
    OrderCoupon,
    UserCoupon,
)
from coupons.redaction import visible
from coupons.services.reversals import REVERSIBLE, with_reversal_reads
from refunds.models import Compensation, RefundCoupon

# Filter name → the statuses it shows; None shows every status.
# Each queue opens on its first filter: what still needs a person.
CASE_FILTERS = {"open": [CaseStatus.OPEN],
                "resolved": [CaseStatus.RESOLVED, CaseStatus.DISMISSED], "all": None}
APPROVAL_FILTERS = {"pending": [RefundCoupon.Status.PENDING_APPROVAL],
                    "reviewed": [RefundCoupon.Status.EXECUTED, RefundCoupon.Status.REJECTED],
                    "all": None}
COMPENSATION_FILTERS = {"proposed": [Compensation.Status.PROPOSED],
                        "decided": [Compensation.Status.APPROVED, Compensation.Status.REJECTED],
                        "all": None}
GOODWILL_FILTERS = {"proposed": [GoodwillProposal.Status.PROPOSED],
                    "decided": [GoodwillProposal.Status.APPROVED,
                                GoodwillProposal.Status.REJECTED],
                    "all": None}
# The filter names stay in the URL (?status=open); the links show these words.
FILTER_LABELS = {
    "all": pgettext_lazy("queue filter", "All"),
    "open": pgettext_lazy("queue filter", "Open"),
    "resolved": pgettext_lazy("queue filter", "Resolved"),
    "pending": pgettext_lazy("queue filter", "Pending"),
    "reviewed": pgettext_lazy("queue filter", "Reviewed"),
    "proposed": pgettext_lazy("queue filter", "Proposed"),
    "decided": pgettext_lazy("queue filter", "Decided"),
}


def _waiting_first(queryset, waiting_status, *order):
    return queryset.annotate(waiting=Case(
        When(status=waiting_status, then=Value(0)), default=Value(1), output_field=IntegerField(),
    )).order_by("waiting", *order)


def _filtered(queryset, statuses):
    return queryset if statuses is None else queryset.filter(status__in=statuses)


def case_queue(*, shown: str) -> QuerySet[ConflictCase]:
    cases = _waiting_first(ConflictCase.objects.select_related("coupon"), CaseStatus.OPEN,
                           "-opened_at", "-id")
    return _filtered(cases, CASE_FILTERS[shown])


def approval_queue(*, shown: str) -> QuerySet[RefundCoupon]:
    """Each with the `journal_tip` its forms name (coupons.evidence.tips)."""
    decisions = with_journal_tip(
        RefundCoupon.objects.select_related("policy_version__policy", "coupon"))
    decisions = _waiting_first(decisions, RefundCoupon.Status.PENDING_APPROVAL,
                               "received_at", "id")
    # Only decisions a person reviews: AUTO-executed ones never waited in this queue.
    return _filtered(decisions.filter(requires_approval=True), APPROVAL_FILTERS[shown])


def compensation_queue(*, shown: str) -> QuerySet[Compensation]:
    """With what each waiting reversal's Approve preview reads and the `journal_tip` its forms
    name, in the page's own query."""
    compensations = with_journal_tip(with_reversal_reads(Compensation.objects.select_related(
        "operation", "resulting_operation", "coupon")))
    compensations = _waiting_first(compensations, Compensation.Status.PROPOSED,
                                   "-created_at", "-id")
    return _filtered(compensations, COMPENSATION_FILTERS[shown])


def case_get(*, case_id) -> ConflictCase | None:
    return ConflictCase.objects.filter(pk=case_id).first()


def decision_get(*, decision_id) -> RefundCoupon | None:
    return with_journal_tip(RefundCoupon.objects.select_related("policy_version__policy")) \
        .filter(pk=decision_id).first()


def compensation_get(*, compensation_id) -> Compensation | None:
    return (with_journal_tip(Compensation.objects.select_related("operation",
                                                                 "resulting_operation"))
            .filter(pk=compensation_id).first())


def case_row(case: ConflictCase, *, can_see_details: bool) -> dict:
    return visible(ConflictCase, {
        "record": case, "evidence": case.evidence, "resolution_note": case.resolution_note,
    }, can_see_details=can_see_details)


def compensation_row(compensation: Compensation, *, can_see_details: bool) -> dict:
    return visible(Compensation, {
        "record": compensation, "amount": compensation.amount,
        "reason": reason_words(compensation),
        "decision_note": compensation.decision_note,
    }, can_see_details=can_see_details)


def operations_written(*, coupon_id, idempotency_key: str) -> list[CouponOperation]:
    """The ledger rows one console action appended (they carry its idempotency key)."""
    if not idempotency_key:
        return []
    return list(CouponOperation.objects.filter(coupon_id=coupon_id,
                                               idempotency_key=idempotency_key)
                .order_by("to_version"))


@dataclass(frozen=True)
class ProposalRow:
    """The ledger row a compensation is proposed for, with what the form starts from."""

    operation: CouponOperation
    reversible: bool
    amount: Decimal | None  # the money this row was worth to its order, when known


def proposal_row(*, operation_id) -> ProposalRow | None:
    """`operation_id` as it came in the link or form (text); None when it names no row."""
    if not str(operation_id or "").isdecimal() or int(operation_id) > 2**63 - 1:
        return None
    operation = (CouponOperation.objects.select_related("coupon__template_version")
                 .filter(pk=int(operation_id)).first())
    if operation is None:
        return None
    amount = operation.amount
    if amount is None and operation.lock_id:
        # The order's own discount, as frozen at LOCK: what redeeming it was worth.
        amount = (OrderCoupon.objects.filter(lock_id=operation.lock_id)
                  .values_list("discount_amount", flat=True).first())
    if amount is None:
        amount = operation.coupon.template_version.face_value
    return ProposalRow(operation, operation.op_type in REVERSIBLE, amount)


def goodwill_queue(*, shown: str) -> QuerySet[GoodwillProposal]:
    """Waiting first, each with the `journal_tip` its forms name."""
    proposals = with_journal_tip(GoodwillProposal.objects.select_related("template"))
    proposals = _waiting_first(proposals, GoodwillProposal.Status.PROPOSED, "-created_at", "-id")
    return _filtered(proposals, GOODWILL_FILTERS[shown])


def goodwill_get(*, goodwill_id) -> GoodwillProposal | None:
    return (with_journal_tip(GoodwillProposal.objects.select_related("template"))
            .filter(pk=goodwill_id).first())


def issuable_templates() -> QuerySet[CouponTemplate]:
    """The templates a goodwill coupon may be proposed from: those whose campaign is open."""
    return CouponTemplate.objects.filter(issuable=True).order_by("code")


def goodwill_coupon(*, coupon_id) -> UserCoupon | None:
    """The coupon a goodwill coupon is proposed from (its owner is the customer)."""
    return UserCoupon.objects.filter(pk=coupon_id).first() if str(coupon_id or "").isdigit() \
        else None


def manual_review_queue(*, limit: int) -> list[RefundCoupon]:
    """The oldest refund decisions waiting for an operator's choice of what happens to the
    coupon (MANUAL_REVIEW), with their coupons and the `journal_tip` their forms name."""
    return list(approval_queue(shown="pending")
                .filter(action=RefundCoupon.Action.MANUAL_REVIEW)[:limit])

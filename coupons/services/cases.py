"""Conflict cases: facts the coupon could not follow, turned into decisions for people."""

from dataclasses import replace
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Case, When
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons import after_sale, clock
from coupons.case_summaries import stored_summary
from coupons.effects import Plan, Step
from coupons.errors import CaseNotOpen, CouponError, NotFound, ValidationFailed
from coupons.evidence.journal import require_folds, with_journal
from coupons.ledger_reasons import case_reason
from coupons.models import (
    CaseStatus,
    ConflictCase,
    CouponStatus,
    FactType,
    OperationType,
    OrderCoupon,
    Recommendation,
)
from coupons.services.lock import coupon_lock
from coupons.services.redeem import coupon_redeem
from coupons.write.context import CommandContext, LeaseProof
from coupons.write.declared import declared_insert, declared_update
from coupons.write.rows import lock_coupon_row
from coupons.write.transitions import guard, is_past_validity

# The compensation kind a resolution that refunds the order's discount opens (after-sale's).
ORDER_DISCOUNT_REFUND = "ORDER_DISCOUNT_REFUND"

# Who the journal names as opening a case: the fact coordinator, not a person.
CASE_OPENER = "system:coordinator"


def recommend(coupon, order_id: str, now) -> tuple[str, str, dict]:
    """What a person should most likely do about a paid order whose coupon moved on: the
    recommendation and its summary's code and values (coupons/case_summaries.py)."""
    if coupon.status == CouponStatus.AVAILABLE and not is_past_validity(coupon, now):
        return Recommendation.COMPENSATING_REDEEM, "free_again", {}
    if coupon.status == CouponStatus.LOCKED and coupon.locked_order_id != order_id:
        return (Recommendation.ORDER_DISCOUNT_REFUND, "held_by_another_order",
                {"order": coupon.locked_order_id})
    if coupon.status == CouponStatus.USED:
        redemption = coupon.redemptions.filter(succeeded=True).first()
        if redemption is not None and redemption.order_id != order_id:
            return (Recommendation.ORDER_DISCOUNT_REFUND, "used_by_another_order",
                    {"order": redemption.order_id})
    return Recommendation.MANUAL_REVIEW, "no_remedy", {"state": coupon.status}


def case_open(*, coupon, order_id, fact_type, payment_id="", evidence,
              recommended: tuple[str, str, dict] | None = None) -> ConflictCase:
    """Open a case, or answer the one already opened for the same coupon, order and fact.

    `recommended` (recommendation, summary code, values) when the caller knows better than
    `recommend` (a presale deposit: coupons/services/presale_cases.py). A case a person has
    resolved or dismissed is not reopened by a redelivery of its fact: that decision stands,
    and the caller sees the closed case.
    """
    if fact_type not in FactType.values:  # the API declares the case's fact as this enum
        raise ValueError(f"not a fact type: {fact_type!r}")
    now = clock.now()
    recommendation, code, params = recommended or recommend(coupon, order_id, now)
    existing = (
        ConflictCase.objects.filter(coupon=coupon, order_id=order_id, fact_type=fact_type)
        .order_by(Case(When(status=CaseStatus.OPEN, then=0), default=1), "-opened_at", "-id")
        .first()
    )
    if existing is not None:
        return existing
    case = ConflictCase(
        coupon=coupon, order_id=order_id, payment_id=payment_id, fact_type=fact_type,
        recommendation=recommendation, summary=stored_summary(code, params), summary_code=code,
        summary_params=params, evidence=evidence, opened_at=now,
    )
    try:
        with transaction.atomic():
            declared_insert(case, kind="opened", actor=CASE_OPENER)
            return case
    except IntegrityError:  # the same fact, delivered twice at once, opened it first
        return ConflictCase.objects.get(
            coupon=coupon, order_id=order_id, fact_type=fact_type, status=CaseStatus.OPEN
        )


def case_resolve(*, case_id, action: str, note: str, ctx: CommandContext) -> ConflictCase:
    """APPLY the recommendation (its commands run through the services), RESOLVE by hand with
    a note, or DISMISS with a note. A failing command leaves the case open."""
    with transaction.atomic():
        case = ConflictCase.objects.filter(pk=case_id).first()
        if case is None:
            raise NotFound(_("No such conflict case."), case_id=case_id)
        lock_coupon_row(case.coupon_id)  # lock order: coupon before the case row
        case = with_journal(ConflictCase.objects.select_for_update()).get(pk=case_id)
        # A case closed past the services is no longer open in its journal: nothing is applied
        # on a row that is not what the journal says.
        require_folds(case)
        if case.status != CaseStatus.OPEN:
            raise CaseNotOpen(current_state=case.status)
        if action == "APPLY":
            resolution = _apply(case, ctx)
        elif action in ("RESOLVE", "DISMISS"):
            if not note.strip():
                raise ValidationFailed(_("Say what was done."),
                                       note=gettext("Required to resolve by hand."))
            resolution = "MANUAL" if action == "RESOLVE" else "DISMISSED"
        else:
            raise ValidationFailed(_("Unknown action."), action=action)
        now = clock.now()
        declared_update(
            case, where={"status": CaseStatus.OPEN},
            changes={"status": CaseStatus.DISMISSED if action == "DISMISS"
                     else CaseStatus.RESOLVED,
                     "resolution": resolution, "resolution_note": note[:1000],
                     "resolved_by": ctx.actor, "resolved_at": now},
            step="dismissed" if action == "DISMISS" else "resolved", actor=ctx.actor,
        )
        return case


def resolution_plan(case: ConflictCase, action: str) -> Plan:
    """What resolving with `action` would do now: the rows APPLY's commands append, the
    compensation it opens for a second operator, or nothing but the case's own record.
    Read without locks, for the page; the commands check again under the coupon's lock."""
    coupon = case.coupon
    if action != "APPLY":
        return Plan(state=coupon.status)
    try:
        if case.recommendation == Recommendation.COMPENSATING_REDEEM:
            guard(OperationType.LOCK, coupon)
            return Plan(state=coupon.status, steps=(
                Step.row(OperationType.LOCK, coupon.status, CouponStatus.LOCKED),
                Step.row(OperationType.REDEEM, CouponStatus.LOCKED, CouponStatus.USED)))
        if case.recommendation == Recommendation.SUBSTITUTE:
            locking = Step.row(OperationType.LOCK, CouponStatus.AVAILABLE, CouponStatus.LOCKED)
            redeeming = Step.row(OperationType.REDEEM, CouponStatus.LOCKED, CouponStatus.USED)
            return Plan(state=coupon.status,
                        steps=(locking, redeeming) if case.payment_id else (locking,))
        if case.recommendation == Recommendation.ORDER_DISCOUNT_REFUND:
            return Plan(state=coupon.status, steps=(Step(
                Step.RECORD, record_kind=ORDER_DISCOUNT_REFUND, amount=_discount_owed(case)),))
        raise ValidationFailed(_("This case needs a person: RESOLVE or DISMISS it with a note."))
    except CouponError as refusal:
        return Plan(refusal=refusal, state=coupon.status)


def _binding(case):
    return (
        OrderCoupon.objects.filter(order_id=case.order_id, coupon_id=case.coupon_id)
        .order_by("-created_at", "-id").first()
    )


def _discount_owed(case) -> Decimal:
    """The bound order's discount snapshot; a presale deposit that never bound its coupon
    counted on what the coupon would have given (the case's evidence)."""
    binding = _binding(case)
    if binding is not None:
        return binding.discount_amount
    return Decimal(case.evidence.get("order_discount", "0"))


def _apply(case: ConflictCase, ctx: CommandContext) -> str:
    # The caller's Idempotency-Key answer is the case, not the first nested command's result.
    ctx = replace(ctx, idempotency_record_id=None)
    binding = _binding(case)
    if case.recommendation == Recommendation.COMPENSATING_REDEEM:
        coupon = case.coupon
        locked = coupon_lock(
            coupon_id=coupon.pk, order_id=case.order_id, user_id=coupon.user_id,
            order_amount=binding.order_amount, quote_id=binding.quote_id, ctx=ctx,
        )
        coupon_redeem(
            coupon_id=coupon.pk, payment_id=case.payment_id, ctx=ctx,
            lease=LeaseProof.from_lock(locked.lock, expected_version=locked.state_version),
        )
        return Recommendation.COMPENSATING_REDEEM
    if case.recommendation == Recommendation.ORDER_DISCOUNT_REFUND:
        after_sale.owe_order_discount(
            order_id=case.order_id, coupon=case.coupon,
            amount=_discount_owed(case),
            reason=case_reason(case), actor=ctx.actor,
        )
        return Recommendation.ORDER_DISCOUNT_REFUND
    if case.recommendation == Recommendation.SUBSTITUTE:
        # Here, not at the top: presale_cases opens its cases with this module's case_open.
        from coupons.services.presale_cases import substitute_apply

        substitute_apply(case, ctx)
        return Recommendation.SUBSTITUTE
    raise ValidationFailed(_("This case needs a person: RESOLVE or DISMISS it with a note."))

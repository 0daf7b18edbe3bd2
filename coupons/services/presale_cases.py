"""A presale whose deposit could not lock its coupon: the order service believes the order has
its discount, so the refusal becomes a conflict case naming the order, the coupon and why.

The order's claim on the coupon is its recorded `DepositPaid` fact (order, coupon, amount,
deadline): no binding exists, so the final payment finds the claim there and joins the same
case. The case recommends what the presale rule does: a substitute coupon of the buyer when one
fits, else the order's discount as a compensation when another order holds or used the coupon,
else a person's review (the deposit named a coupon the order could never have: another
buyer's, below its threshold, not yet valid).
"""

from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.case_summaries import stored_summary
from coupons.discounts import discount_for
from coupons.errors import CouponError, ValidationFailed
from coupons.evidence.journal import require_folds, with_journal
from coupons.models import (
    CaseStatus,
    ConflictCase,
    CouponStatus,
    FactType,
    OrderFact,
    PresaleSettlement,
    Recommendation,
    SettlementResult,
    UserCoupon,
)
from coupons.services.cases import CASE_OPENER, case_open
from coupons.services.lock import coupon_lock
from coupons.services.redeem import coupon_redeem
from coupons.substitutes import find_substitutes
from coupons.write.context import CommandContext, LeaseProof
from coupons.write.declared import declared_update
from coupons.write.rows import lock_coupon_row


def deposit_claim(order_id: str) -> OrderFact | None:
    """The order's recorded deposit: which coupon it claims, for how much, until when."""
    return (OrderFact.objects.filter(order_id=order_id, fact_type=FactType.DEPOSIT_PAID)
            .order_by("recorded_at", "id").first())


def claimed_discount(coupon: UserCoupon, claim: OrderFact) -> Decimal:
    """What the coupon would have given the order: the discount the order service counts on."""
    return discount_for(coupon.template_version, Decimal(claim.payload["order_amount"]))


def presale_recommendation(coupon: UserCoupon, claim: OrderFact, code: str,
                           now) -> tuple[str, str, dict, UserCoupon | None]:
    """(recommendation, summary code, summary values, the substitute it names)."""
    params = {"order": claim.order_id, "coupon": coupon.pk, "code": code}
    substitutes = find_substitutes(
        original=coupon, user_id=claim.payload["user_id"], terms=coupon.template_version,
        order_amount=Decimal(claim.payload["order_amount"]),
        discount=claimed_discount(coupon, claim), now=now,
    )
    if substitutes:
        return (Recommendation.SUBSTITUTE, "deposit_substitute",
                {**params, "substitute": substitutes[0].pk}, substitutes[0])
    holder = other_order_of(coupon, claim.order_id)
    if holder:
        return (Recommendation.ORDER_DISCOUNT_REFUND, "deposit_compensate",
                {**params, "holder": holder}, None)
    return Recommendation.MANUAL_REVIEW, "deposit_review", params, None


def other_order_of(coupon: UserCoupon, order_id: str) -> str:
    """The other order that holds or used the coupon, or ""."""
    if coupon.status == CouponStatus.LOCKED and coupon.locked_order_id != order_id:
        return coupon.locked_order_id
    if coupon.status == CouponStatus.USED:
        redemption = coupon.redemptions.filter(succeeded=True).first()
        if redemption is not None and redemption.order_id != order_id:
            return redemption.order_id
    return ""


def presale_case_open(*, coupon: UserCoupon, claim: OrderFact,
                      error: CouponError) -> ConflictCase:
    """Open (or answer the open) case for a deposit whose LOCK was refused with `error`."""
    coupon.refresh_from_db()
    recommendation, code, params, substitute = presale_recommendation(
        coupon, claim, error.code, clock.now())
    return case_open(
        coupon=coupon, order_id=claim.order_id, fact_type=FactType.DEPOSIT_PAID,
        recommended=(recommendation, code, params),
        evidence={
            "refused_with": error.code,
            "error_details": error.details,
            "coupon_state": coupon.status,
            "coupon_version": coupon.state_version,
            "order_amount": claim.payload["order_amount"],
            "order_discount": f"{claimed_discount(coupon, claim):.2f}",
            "final_payment_deadline": claim.payload["final_payment_deadline"],
            "substitute_coupon_id": substitute.pk if substitute else None,
            "message_id": claim.first_message.message_id,
        },
    )


def presale_case_join(*, coupon: UserCoupon, claim: OrderFact, payment: OrderFact,
                      ) -> ConflictCase:
    """The final payment of an order whose deposit never locked its coupon: it joins the
    deposit's open case (the payment, and what is recommended now), or opens one when no
    deposit case is open (a case a person closed stays closed: that decision stands)."""
    lock_coupon_row(coupon.pk)  # lock order: coupon before the case row, as case_resolve
    case = (with_journal(ConflictCase.objects.select_for_update())
            .filter(coupon=coupon, order_id=claim.order_id, fact_type=FactType.DEPOSIT_PAID)
            .order_by("-opened_at", "-id").first())
    if case is None:
        return case_open(coupon=coupon, order_id=claim.order_id,
                         fact_type=FactType.FINAL_PAYMENT_SUCCEEDED,
                         payment_id=payment.payment_id,
                         evidence={"refused_with": "NO_BINDING",
                                   "coupon_state": coupon.status,
                                   "payment_id": payment.payment_id,
                                   "message_id": payment.first_message.message_id})
    if case.status != CaseStatus.OPEN or case.payment_id == payment.payment_id:
        return case
    require_folds(case)
    recommendation, code, params, substitute = presale_recommendation(
        coupon, claim, case.evidence["refused_with"], clock.now())
    declared_update(case, where={"status": CaseStatus.OPEN}, changes={
        "payment_id": payment.payment_id,
        "evidence": {**case.evidence, "final_payment_id": payment.payment_id,
                     "final_payment_message_id": payment.first_message.message_id,
                     "substitute_coupon_id": substitute.pk if substitute else None},
        "recommendation": recommendation, "summary": stored_summary(code, params),
        "summary_code": code, "summary_params": params,
    }, step="joined", actor=CASE_OPENER)
    return case


def substitute_apply(case: ConflictCase, ctx: CommandContext) -> None:
    """Lock the best fitting coupon of the buyer for the order, with the deposit's lease (the
    final payment then redeems it as its own), and redeem it now if the order already paid."""
    claim = deposit_claim(case.order_id)
    if claim is None:
        raise ValidationFailed(_("The order's deposit is no longer recorded: resolve by hand."))
    coupon = case.coupon
    order_amount = Decimal(claim.payload["order_amount"])
    discount = claimed_discount(coupon, claim)
    grace = timedelta(seconds=settings.COUPONS["PRESALE_GRACE_SECONDS"])
    lease_until = max(parse_datetime(claim.payload["final_payment_deadline"]) + grace,
                      clock.now() + grace)
    for substitute in find_substitutes(
            original=coupon, user_id=claim.payload["user_id"], terms=coupon.template_version,
            order_amount=order_amount, discount=discount, now=clock.now()):
        try:
            with transaction.atomic():  # a refused redeem takes its lock back with it
                locked = coupon_lock(
                    coupon_id=substitute.pk, order_id=case.order_id, user_id=substitute.user_id,
                    order_amount=order_amount, quote_id=claim.payload.get("quote_id", ""),
                    lease_until=lease_until, discount_cap=discount, ctx=ctx,
                )
                if case.payment_id:
                    coupon_redeem(
                        coupon_id=substitute.pk, payment_id=case.payment_id, ctx=ctx,
                        lease=LeaseProof.from_lock(locked.lock,
                                                   expected_version=locked.state_version),
                    )
                    PresaleSettlement.objects.get_or_create(order_id=case.order_id, defaults={
                        "coupon": coupon, "result": SettlementResult.SUBSTITUTED,
                        "substitute": substitute,
                        "strategy": coupon.template_version.expiry_during_lock,
                        "discount_amount": discount, "payment_id": case.payment_id,
                        "settled_at": clock.now()})
        except CouponError:
            continue  # taken or changed since the case was written: try the next one
        return
    raise ValidationFailed(_("No coupon of the buyer fits this order any more: resolve or "
                             "dismiss the case by hand."))

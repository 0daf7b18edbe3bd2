"""Final payment of a presale order under the template's expiry_during_lock strategy."""

from datetime import UTC, datetime
from decimal import Decimal

from django.db import transaction
from django.db.models import Q

from coupons import after_sale, clock
from coupons.discounts import discount_for
from coupons.errors import CouponBusy, CouponError, CouponExpired
from coupons.events.facts import stored_lease
from coupons.ledger_reasons import reason
from coupons.models import (
    CouponStatus,
    ExpiryDuringLock,
    PresaleSettlement,
    SettlementResult,
    UserCoupon,
)
from coupons.services import LeaseProof, coupon_lock, coupon_redeem

NEVER = datetime.max.replace(tzinfo=UTC)


def settle_final_payment(fact, binding, ctx) -> dict:
    """Redeem the deposit's coupon; if it expired under STRICT the order paid in full; under
    SUBSTITUTE another coupon pays, or a compensation is recorded. Raises StateConflict when
    the order no longer holds the coupon (the caller opens a case)."""
    settled = PresaleSettlement.objects.filter(order_id=fact.order_id).first()
    if settled is not None:
        return _outcome("ALREADY_SETTLED", settled)
    strategy = binding.template_version.expiry_during_lock
    try:
        coupon_redeem(
            coupon_id=binding.coupon_id, lease=stored_lease(binding.lock),
            payment_id=fact.payment_id, ctx=ctx,
        )
    except CouponExpired:
        if strategy == ExpiryDuringLock.SUBSTITUTE:
            return _substitute_or_compensate(fact, binding, ctx)
        return _settle(fact, binding, SettlementResult.PAID_IN_FULL, discount=Decimal(0))
    return _settle(fact, binding, SettlementResult.REDEEMED, discount=binding.discount_amount)


def find_substitutes(binding, now) -> list[UserCoupon]:
    """The user's usable coupons of the same kind that give this order at least the original
    discount: the cheapest that suffices first, then the earliest expiring."""
    original = binding.coupon
    candidates = (
        UserCoupon.objects.select_related("template_version")
        .filter(user_id=original.user_id, status=CouponStatus.AVAILABLE,
                template_version__kind=binding.template_version.kind)
        .exclude(pk=original.pk)
        .filter(Q(valid_from__isnull=True) | Q(valid_from__lte=now))
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=now))
    )
    ranked = []
    for coupon in candidates:
        terms = coupon.template_version
        if binding.order_amount < terms.min_order_amount:
            continue
        discount = discount_for(terms, binding.order_amount)
        if discount >= binding.discount_amount:
            ranked.append((discount, coupon.valid_until or NEVER, coupon.pk, coupon))
    return [coupon for *_, coupon in sorted(ranked)]


def _substitute_or_compensate(fact, binding, ctx) -> dict:
    for substitute in find_substitutes(binding, clock.now()):
        try:
            # One savepoint for the pair, so a redeem that fails takes its lock back with it.
            with transaction.atomic():
                locked = coupon_lock(
                    coupon_id=substitute.pk, order_id=fact.order_id,
                    user_id=substitute.user_id, order_amount=binding.order_amount,
                    quote_id=binding.quote_id, discount_cap=binding.discount_amount, ctx=ctx,
                )
                coupon_redeem(
                    coupon_id=substitute.pk, payment_id=fact.payment_id, ctx=ctx,
                    lease=LeaseProof.from_lock(locked.lock, expected_version=locked.state_version),
                )
        except CouponBusy:
            raise  # held by another transaction: the fact is retried, nothing is owed for it
        except CouponError:
            continue  # taken or changed since we looked: try the next one
        return _settle(fact, binding, SettlementResult.SUBSTITUTED,
                       discount=binding.discount_amount, substitute=substitute)
    after_sale.owe_presale_discount(
        order_id=fact.order_id,
        coupon=binding.coupon, amount=binding.discount_amount, actor=ctx.actor,
        reason=reason("presale_no_substitute"),
    )
    return _settle(fact, binding, SettlementResult.COMPENSATED, discount=binding.discount_amount)


def _settle(fact, binding, result, *, discount, substitute=None) -> dict:
    # A second delivery of the final payment, racing this one, may have settled first.
    settled, created = PresaleSettlement.objects.get_or_create(
        order_id=fact.order_id,
        defaults={"coupon": binding.coupon, "result": result, "substitute": substitute,
                  "strategy": binding.template_version.expiry_during_lock,
                  "discount_amount": discount, "payment_id": fact.payment_id,
                  "settled_at": clock.now()},
    )
    return _outcome(result if created else "ALREADY_SETTLED", settled)


def _outcome(action, settled: PresaleSettlement) -> dict:
    return {
        "action": action,
        "coupon_id": settled.coupon_id,
        "settlement": settled.result,
        "substitute_coupon_id": settled.substitute_id,
        "discount_amount": f"{settled.discount_amount:.2f}",
    }

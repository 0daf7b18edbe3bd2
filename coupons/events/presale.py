"""Final payment of a presale order under the template's expiry_during_lock strategy."""

from decimal import Decimal

from django.db import transaction

from coupons import after_sale, clock
from coupons.errors import CouponBusy, CouponError, CouponExpired
from coupons.events.facts import stored_lease
from coupons.ledger_reasons import reason
from coupons.models import ExpiryDuringLock, PresaleSettlement, SettlementResult, UserCoupon
from coupons.services import LeaseProof, coupon_lock, coupon_redeem
from coupons.substitutes import find_substitutes


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


def substitutes_for(binding, now) -> list[UserCoupon]:
    return find_substitutes(original=binding.coupon, user_id=binding.coupon.user_id,
                            terms=binding.template_version,
                            order_amount=binding.order_amount,
                            discount=binding.discount_amount, now=now)


def _substitute_or_compensate(fact, binding, ctx) -> dict:
    for substitute in substitutes_for(binding, clock.now()):
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
                  "discount_applied": fact.payload.get("discount_applied"),
                  "amount_charged": fact.payload.get("amount_charged"),
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
        "discount_applied": _money(settled.discount_applied),
        "amount_charged": _money(settled.amount_charged),
    }


def _money(amount) -> str | None:
    return None if amount is None else f"{Decimal(amount):.2f}"

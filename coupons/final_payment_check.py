"""Before the final payment is charged: will the order's locked coupon still apply, under its
template's expiry strategy, and for how much? A read (no lock, no evidence); the final payment
itself decides under the coupon's row lock, so the answer is a forecast that holds unless
something moves the coupon in between.

Four outcomes, each a stable code with a sentence a customer can read (English and Chinese):
NOT_LOCKED (the order holds no coupon), LOCKED_BY_ANOTHER_ORDER (the coupon its deposit named
is another order's), EXPIRED (its validity ended and the strategy says what that costs), OK.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.utils.translation import gettext_lazy as _

from coupons.events.facts import order_binding
from coupons.models import (
    CouponStatus,
    ExpiryDuringLock,
    FactType,
    LockStatus,
    OrderFact,
    UserCoupon,
)
from coupons.substitutes import find_substitutes
from coupons.write.transitions import is_past_validity

NOT_LOCKED = "NOT_LOCKED"
LOCKED_BY_ANOTHER_ORDER = "LOCKED_BY_ANOTHER_ORDER"
EXPIRED = "EXPIRED"
OK = "OK"
OUTCOMES = (NOT_LOCKED, LOCKED_BY_ANOTHER_ORDER, EXPIRED, OK)

# Who gives the order its discount at the final payment.
BY_COUPON, BY_SUBSTITUTE, BY_COMPENSATION, BY_NOBODY = (
    "COUPON", "SUBSTITUTE", "COMPENSATION", "NONE")
DISCOUNT_SOURCES = (BY_COUPON, BY_SUBSTITUTE, BY_COMPENSATION, BY_NOBODY)

MESSAGES = {
    NOT_LOCKED: _("No coupon is held for this order: the final payment is charged in full."),
    LOCKED_BY_ANOTHER_ORDER: _("The coupon chosen for this order is held by another order: "
                               "the final payment is charged in full."),
    (EXPIRED, BY_NOBODY): _("The coupon expired before the final payment: the final payment "
                            "is charged in full."),
    (EXPIRED, BY_SUBSTITUTE): _("The coupon expired before the final payment; another of your "
                                "coupons gives the same discount of %(discount)s."),
    (EXPIRED, BY_COMPENSATION): _("The coupon expired before the final payment and no other "
                                  "coupon fits; the discount of %(discount)s is paid back as "
                                  "a compensation."),
    OK: _("The coupon applies: the final payment gets a discount of %(discount)s."),
}


@dataclass(frozen=True)
class FinalPaymentCheck:
    order_id: str
    outcome: str
    discount_amount: Decimal = Decimal(0)
    discount_by: str = BY_NOBODY
    coupon: UserCoupon | None = None
    strategy: str = ""
    substitute: UserCoupon | None = None
    holder_order_id: str = ""

    @property
    def message(self) -> str:
        """The sentence for the customer, in the active language."""
        sentence = MESSAGES.get((self.outcome, self.discount_by)) or MESSAGES[self.outcome]
        return str(sentence) % {"discount": f"{self.discount_amount:.2f}"}


def final_payment_check(*, order_id: str, now) -> FinalPaymentCheck:
    binding = order_binding(order_id)
    if binding is None or binding.lock.status not in (LockStatus.ACTIVE, LockStatus.CONSUMED):
        return _unheld(order_id, binding)
    coupon, terms = binding.coupon, binding.template_version
    held = {"order_id": order_id, "coupon": coupon, "strategy": terms.expiry_during_lock}
    if binding.lock.status == LockStatus.CONSUMED or not is_past_validity(coupon, now) \
            or terms.expiry_during_lock == ExpiryDuringLock.LOCK_HONORS:
        return FinalPaymentCheck(outcome=OK, discount_amount=binding.discount_amount,
                                 discount_by=BY_COUPON, **held)
    if terms.expiry_during_lock == ExpiryDuringLock.STRICT:
        return FinalPaymentCheck(outcome=EXPIRED, **held)
    substitutes = find_substitutes(original=coupon, user_id=coupon.user_id, terms=terms,
                                   order_amount=binding.order_amount,
                                   discount=binding.discount_amount, now=now)
    return FinalPaymentCheck(
        outcome=EXPIRED, discount_amount=binding.discount_amount,
        discount_by=BY_SUBSTITUTE if substitutes else BY_COMPENSATION,
        substitute=substitutes[0] if substitutes else None, **held)


def _unheld(order_id: str, binding) -> FinalPaymentCheck:
    """The order holds no live lease: is the coupon it counted on another order's?"""
    coupon = binding.coupon if binding is not None else _deposit_coupon(order_id)
    if coupon is None:
        return FinalPaymentCheck(order_id=order_id, outcome=NOT_LOCKED)
    holder = ""
    if coupon.status == CouponStatus.LOCKED and coupon.locked_order_id != order_id:
        holder = coupon.locked_order_id
    elif coupon.status == CouponStatus.USED:
        redemption = coupon.redemptions.filter(succeeded=True).first()
        holder = redemption.order_id if redemption and redemption.order_id != order_id else ""
    return FinalPaymentCheck(order_id=order_id, coupon=coupon,
                             outcome=LOCKED_BY_ANOTHER_ORDER if holder else NOT_LOCKED,
                             strategy=coupon.template_version.expiry_during_lock,
                             holder_order_id=holder)


def _deposit_coupon(order_id: str) -> UserCoupon | None:
    claim = (OrderFact.objects.filter(order_id=order_id, fact_type=FactType.DEPOSIT_PAID)
             .order_by("recorded_at", "id").first())
    if claim is None:
        return None
    return (UserCoupon.objects.select_related("template_version")
            .filter(pk=claim.payload["coupon_id"]).first())

from decimal import ROUND_DOWN, Decimal

from coupons.models import CouponKind

CENT = Decimal("0.01")


def discount_for(terms, order_amount: Decimal) -> Decimal:
    """The discount a coupon's terms give an order: never above the order amount.

    Percent discounts round down to the cent so rounding never gives away more than the cap.
    """
    if terms.kind == CouponKind.PERCENT_OFF:
        discount = (order_amount * terms.percent_off / 100).quantize(CENT, rounding=ROUND_DOWN)
        if terms.max_discount is not None:
            discount = min(discount, terms.max_discount)
    else:  # AMOUNT_OFF, or EXCHANGE worth the exchanged item's value
        discount = terms.face_value
    return min(discount, order_amount).quantize(CENT)

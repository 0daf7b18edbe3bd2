"""Which of a buyer's coupons may stand in for one an order cannot use (the SUBSTITUTE
strategy at final payment, and a conflict case about a presale deposit)."""

from datetime import UTC, datetime
from decimal import Decimal

from django.db.models import Q

from coupons.discounts import discount_for
from coupons.models import CouponStatus, UserCoupon
from coupons.scope import covers

NEVER = datetime.max.replace(tzinfo=UTC)


def find_substitutes(*, original: UserCoupon, user_id: str, terms, order_amount: Decimal,
                     discount: Decimal, now) -> list[UserCoupon]:
    """The buyer's usable coupons of the same kind (`terms`: what the order was promised) whose
    scope covers the original's and that give this order at least `discount`: the cheapest
    that suffices first, then the earliest expiring."""
    candidates = (
        UserCoupon.objects.select_related("template_version")
        .filter(user_id=user_id, status=CouponStatus.AVAILABLE,
                template_version__kind=terms.kind)
        .filter(covers(terms, path="template_version__"))
        .exclude(pk=original.pk)
        .filter(Q(valid_from__isnull=True) | Q(valid_from__lte=now))
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=now))
    )
    ranked = []
    for coupon in candidates:
        if order_amount < coupon.template_version.min_order_amount:
            continue
        gives = discount_for(coupon.template_version, order_amount)
        if gives >= discount:
            ranked.append((gives, coupon.valid_until or NEVER, coupon.pk, coupon))
    return [coupon for *_, coupon in sorted(ranked)]

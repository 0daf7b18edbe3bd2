"""Row locks, taken in one order everywhere: order binding → coupon → refund record."""

from coupons.errors import NotFound
from coupons.models import UserCoupon


def lock_coupon_row(coupon_id) -> UserCoupon:
    """Lock the coupon row for the rest of the transaction.

    NO KEY UPDATE, not UPDATE: ledger, lock and outbox inserts that reference the coupon take
    KEY SHARE on it, and we must not block those; we never change the coupon's key. `of=self`
    because the joined lease is nullable (an outer join PostgreSQL cannot lock through).
    """
    coupon = (
        UserCoupon.objects.select_for_update(no_key=True, of=("self",))
        .select_related("template_version", "current_lock")
        .filter(pk=coupon_id)
        .first()
    )
    if coupon is None:
        raise NotFound("No such coupon.", coupon_id=coupon_id)
    return coupon

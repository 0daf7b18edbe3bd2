"""Row locks, taken in one order everywhere: order binding → coupon → refund record."""

from django.db.models import OuterRef, Subquery
from django.utils.translation import gettext_lazy as _

from coupons.errors import NotFound
from coupons.models import CouponOperation, UserCoupon


def lock_coupon_row(coupon_id, *related: str) -> UserCoupon:
    """Lock the coupon row for the rest of the transaction.

    NO KEY UPDATE, not UPDATE: ledger, lock and outbox inserts that reference the coupon take
    KEY SHARE on it, and we must not block those; we never change the coupon's key. `of=self`
    because the joined lease is nullable (an outer join PostgreSQL cannot lock through).
    `related` joins what the command reads anyway (REDEEM: the lease's order link).

    The same statement reads the hash of the ledger row at the coupon's current version, which
    the next ledger row links to (records.append_operation), instead of a read of its own.
    """
    ledger_head = CouponOperation.objects.filter(
        coupon=OuterRef("pk"), to_version=OuterRef("state_version")
    ).values("content_hash")[:1]
    coupon = (
        UserCoupon.objects.select_for_update(no_key=True, of=("self",))
        .select_related("template_version", "current_lock", *related)
        .annotate(ledger_head_hash=Subquery(ledger_head))
        .filter(pk=coupon_id)
        .first()
    )
    if coupon is None:
        raise NotFound(_("No such coupon."), coupon_id=coupon_id)
    if coupon.ledger_head_hash is not None:
        coupon.ledger_head = (coupon.state_version, coupon.ledger_head_hash)
    # else: if the row lock waited for a command on this coupon, the row was read again after
    # its commit but the subquery kept the statement's older snapshot and missed that command's
    # ledger row; records.append_operation then reads the head itself.
    return coupon

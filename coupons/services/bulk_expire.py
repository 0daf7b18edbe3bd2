"""Expire a batch of AVAILABLE coupons past valid_until in a few statements (the expiry
scanner's fast path): coupon_expire (coupons/services/expire.py) for many coupons at once.

One compare-and-set UPDATE whose WHERE carries each row's own status and version, the ledger
rows, their journal entries and the outbox rows in one INSERT each. The caller holds every
coupon's row lock, read in the same transaction.
"""

from django.db.models import F, Q

from coupons.ledger_reasons import reason, reason_fields
from coupons.models import CouponStatus, OperationType, UserCoupon
from coupons.services.bulk_release import moved_on
from coupons.write.payloads import iso
from coupons.write.records import append_operations, append_outboxes, ledger_row
from coupons.write.transitions import guard_batch, is_past_validity


def coupons_expire(*, coupons: list[UserCoupon], ctx, now) -> set[int]:
    """Expire each coupon as read; the ids expired. One still valid, or changed since it was
    read, is left alone and missing from the answer."""
    due = [c for c in coupons if is_past_validity(c, now)]
    if not due:
        return set()
    guard_batch(OperationType.EXPIRE, [(CouponStatus.AVAILABLE, CouponStatus.EXPIRED)])
    as_read = Q(pk__in=[])
    for c in due:
        as_read |= Q(pk=c.pk, status=CouponStatus.AVAILABLE, state_version=c.state_version)
    changed = UserCoupon.objects.filter(as_read).update(
        status=CouponStatus.EXPIRED, state_version=F("state_version") + 1, updated_at=now)
    if changed != len(due):
        moved = moved_on(due, {c.pk: CouponStatus.EXPIRED for c in due})
        due = [c for c in due if c.pk in moved]

    operations = []
    for coupon in due:
        from_version = coupon.state_version
        coupon.status, coupon.state_version, coupon.updated_at = (
            CouponStatus.EXPIRED, from_version + 1, now)
        operations.append(ledger_row(
            coupon=coupon, op_type=OperationType.EXPIRE, from_state=CouponStatus.AVAILABLE,
            from_version=from_version, ctx=ctx, now=now,
            **reason_fields(reason("past_valid_until", valid_until=iso(coupon.valid_until)))))
    append_outboxes(append_operations(operations))
    return {c.pk for c in due}

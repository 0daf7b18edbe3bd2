"""CouponExpiresBeforeFinalPayment: tell the order service, before its payment page does, that
a presale lease's coupon will expire before the order's final-payment deadline (under
STRICT the buyer then pays full price; SUBSTITUTE may find no substitute).

Not a command: a warning changes no state, so it writes no ledger row and moves no version (the
ledger counts state changes, docs/design.md, and the replay checker would find a version-less row).
It is an outbox-only notification, published by the relay like every event, and recorded by one
ExpiryWarning row per lease, whose unique lease makes it at most once. Both rows are written in the
caller's transaction, which holds the coupon row lock.
"""

from coupons.models import ExpiryWarning, OutboxEvent, UserCoupon
from coupons.write.payloads import iso, money

EVENT_TYPE = "CouponExpiresBeforeFinalPayment"


def expiry_warning_send(*, coupon: UserCoupon, final_payment_deadline, now) -> ExpiryWarning:
    lease = coupon.current_lock
    binding = lease.order_coupon
    warning = ExpiryWarning.objects.create(
        lock=lease, coupon=coupon, order_id=lease.order_id,
        strategy=binding.template_version.expiry_during_lock, valid_until=coupon.valid_until,
        final_payment_deadline=final_payment_deadline, created_at=now,
    )
    OutboxEvent.objects.create(
        event_type=EVENT_TYPE, coupon=coupon, operation=None, created_at=now,
        payload={
            "coupon_id": coupon.pk,
            "user_id": coupon.user_id,
            "warning_id": warning.pk,
            # The version the warning was about; consumers order a coupon's events by it.
            "state_version": coupon.state_version,
            "order_id": lease.order_id,
            "lock_id": str(lease.pk),
            "strategy": warning.strategy,
            "valid_until": iso(warning.valid_until),
            "final_payment_deadline": iso(final_payment_deadline),
            "discount_amount": money(binding.discount_amount),
            "occurred_at": iso(now),
        },
    )
    return warning

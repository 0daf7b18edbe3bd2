"""FinalPaymentWindowOpened: tell the order service, when a presale order's final-payment window
opens, which coupon it holds and what it saves, so it can remind the buyer to pay.

Not a command (as coupons/services/expiry_warning.py): no ledger row, no version; an outbox row
with no operation, published by the relay, and one FinalPaymentReminder row per order whose
unique order id makes it at most once. Written in the caller's transaction, which holds the
coupon row lock.
"""

from coupons.models import FinalPaymentReminder, OutboxEvent, UserCoupon
from coupons.write.payloads import iso, money

EVENT_TYPE = "FinalPaymentWindowOpened"


def final_payment_reminder_send(*, coupon: UserCoupon, opens_at, deadline,
                                now) -> FinalPaymentReminder:
    lease = coupon.current_lock
    binding = lease.order_coupon
    reminder = FinalPaymentReminder.objects.create(
        order_id=lease.order_id, lock=lease, coupon=coupon,
        discount_amount=binding.discount_amount, final_payment_opens_at=opens_at,
        final_payment_deadline=deadline, created_at=now,
    )
    OutboxEvent.objects.create(
        event_type=EVENT_TYPE, coupon=coupon, operation=None, created_at=now,
        payload={
            "coupon_id": coupon.pk,
            "user_id": coupon.user_id,
            "reminder_id": reminder.pk,
            # The lease's version; consumers order a coupon's events by it.
            "state_version": coupon.state_version,
            "order_id": lease.order_id,
            "lock_id": str(lease.pk),
            "discount_amount": money(binding.discount_amount),
            "strategy": binding.template_version.expiry_during_lock,
            "valid_until": iso(coupon.valid_until) if coupon.valid_until else None,
            "final_payment_opens_at": iso(opens_at),
            "final_payment_deadline": iso(deadline),
            "occurred_at": iso(now),
        },
    )
    return reminder

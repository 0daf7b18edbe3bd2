from django.db import models

from coupons.models.append_only import delete_refused, frozen_except
from coupons.models.journal import Journaled


class Redemption(Journaled):
    """The fact that a payment consumed a coupon (frozen but for `succeeded`, which moves)."""

    # A RETURN turns it off, a REVERSE off or on again: each move is an entry.
    JOURNAL_STEPS = ("returned", "reversed")
    JOURNAL_MOVES = ("succeeded",)

    coupon = models.ForeignKey(
        "coupons.UserCoupon", on_delete=models.PROTECT, related_name="redemptions"
    )
    lock = models.OneToOneField("coupons.CouponLock", on_delete=models.PROTECT)
    order_id = models.CharField(max_length=64, db_index=True)
    payment_id = models.CharField(max_length=64, db_index=True)
    discount_amount = models.DecimalField(max_digits=12, decimal_places=2)
    succeeded = models.BooleanField(
        default=True, help_text="False once a later RETURN or REVERSE undid it."
    )
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            # Invariant 2: at most one successful redemption per coupon. This, not the
            # (coupon, payment) pair, is what stops one coupon paying for two orders.
            models.UniqueConstraint(
                fields=["coupon"], condition=models.Q(succeeded=True),
                name="one_successful_redemption",
            ),
        ]
        # Only `succeeded` moves: a RETURN or REVERSE of the redemption turns it off (and a
        # reversal of that RETURN back on); the one-successful constraint still holds.
        triggers = [*delete_refused(), *frozen_except("succeeded")]

    def __str__(self):
        return f"redemption {self.pk}: coupon {self.coupon_id} by {self.order_id}/{self.payment_id}"

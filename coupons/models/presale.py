from django.db import models

from coupons.models.append_only import AppendOnlyModel, append_only_triggers


class SettlementResult(models.TextChoices):
    REDEEMED = "REDEEMED"  # the deposit's coupon paid for the order
    PAID_IN_FULL = "PAID_IN_FULL"  # STRICT: the coupon had expired, the order paid full price
    SUBSTITUTED = "SUBSTITUTED"  # SUBSTITUTE: another coupon of the user paid instead
    COMPENSATED = "COMPENSATED"  # SUBSTITUTE with no fit: a compensation was recorded


class PresaleSettlement(models.Model):
    """What the final payment of a presale order did with the coupon locked at its deposit."""

    order_id = models.CharField(max_length=64, unique=True)
    coupon = models.ForeignKey("coupons.UserCoupon", on_delete=models.PROTECT, related_name="+")
    strategy = models.CharField(max_length=16)
    result = models.CharField(max_length=16, choices=SettlementResult.choices)
    substitute = models.ForeignKey(
        "coupons.UserCoupon", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    discount_amount = models.DecimalField(
        max_digits=12, decimal_places=2, help_text="The discount the order finally got."
    )
    payment_id = models.CharField(max_length=64)
    # What the final payment fact said was applied and charged, when it said so: under STRICT
    # the coupon gave nothing, and this is what the order actually paid.
    discount_applied = models.DecimalField(max_digits=12, decimal_places=2, null=True,
                                           blank=True)
    amount_charged = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    settled_at = models.DateTimeField()

    def __str__(self):
        return f"presale {self.order_id}: {self.result}"


class ExpiryWarning(AppendOnlyModel):
    """A `CouponExpiresBeforeFinalPayment` event was written to the outbox for this lease.

    A warning changes no coupon state, so it has no ledger row (the ledger counts state changes,
    docs/design.md) and its outbox row has no operation. This row is its record: one per lease (the
    unique lock), so a rerun, a second scanner or a retried batch never warns the buyer twice.
    """

    lock = models.OneToOneField("coupons.CouponLock", on_delete=models.PROTECT,
                                related_name="expiry_warning")
    coupon = models.ForeignKey("coupons.UserCoupon", on_delete=models.PROTECT, related_name="+")
    order_id = models.CharField(max_length=64)
    strategy = models.CharField(max_length=16)
    valid_until = models.DateTimeField()
    final_payment_deadline = models.DateTimeField()
    created_at = models.DateTimeField()

    class Meta:
        triggers = append_only_triggers()

    def __str__(self):
        return f"expiry warning {self.order_id} (coupon {self.coupon_id})"


class FinalPaymentReminder(AppendOnlyModel):
    """A `FinalPaymentWindowOpened` event was written to the outbox for this order.

    Like ExpiryWarning, a reminder changes no state: no ledger row, no version, an outbox row
    with no operation. This row is its record, unique per order, so the buyer is reminded once
    whatever reruns, scanners or later leases of the order (a substitute) do.
    """

    order_id = models.CharField(max_length=64, unique=True)
    lock = models.ForeignKey("coupons.CouponLock", on_delete=models.PROTECT, related_name="+")
    coupon = models.ForeignKey("coupons.UserCoupon", on_delete=models.PROTECT, related_name="+")
    discount_amount = models.DecimalField(max_digits=12, decimal_places=2)
    final_payment_opens_at = models.DateTimeField()
    final_payment_deadline = models.DateTimeField()
    created_at = models.DateTimeField()

    class Meta:
        triggers = append_only_triggers()

    def __str__(self):
        return f"final-payment reminder {self.order_id} (coupon {self.coupon_id})"

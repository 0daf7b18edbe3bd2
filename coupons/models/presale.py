from django.db import models


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
    settled_at = models.DateTimeField()

    def __str__(self):
        return f"presale {self.order_id}: {self.result}"

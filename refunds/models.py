from django.db import models


class Compensation(models.Model):
    """Money or a coupon owed to an order because its coupon could not give the discount.

    Recorded by the coupon service (a SUBSTITUTE presale with no substitute, a conflict case
    resolved by refunding the discount); paid out by the order service, approved by operators.
    """

    class Kind(models.TextChoices):
        PRESALE_EXPIRED_COUPON = "PRESALE_EXPIRED_COUPON"
        ORDER_DISCOUNT_REFUND = "ORDER_DISCOUNT_REFUND"

    class Status(models.TextChoices):
        PROPOSED = "PROPOSED"
        APPROVED = "APPROVED"
        REJECTED = "REJECTED"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    order_id = models.CharField(max_length=64, db_index=True)
    coupon = models.ForeignKey("coupons.UserCoupon", on_delete=models.PROTECT, related_name="+")
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    reason = models.CharField(max_length=500)
    created_by = models.CharField(max_length=128)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            # The same shortfall reported twice (a redelivered fact) is one compensation.
            models.UniqueConstraint(fields=["order_id", "coupon", "kind"],
                                    name="one_compensation_per_shortfall"),
        ]

    def __str__(self):
        # No amount: this names the row wherever it is listed, also to people who may not see
        # it (coupons.redaction).
        return f"{self.kind} for {self.order_id} ({self.status})"

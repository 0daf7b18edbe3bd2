from django.db import models


class Compensation(models.Model):
    """Money owed to an order, or a ledger operation to undo, decided by a second person.

    Recorded by the coupon service (a SUBSTITUTE presale with no substitute, a conflict case
    resolved by refunding the discount) or proposed by an operator for one ledger operation (a
    wrong redeem, void or expiry). Another operator approves it: a reversal appends a REVERSE
    row, money a COMPENSATE row with the amount (coupons.services.compensation_decide). Nothing
    is edited or deleted: the proposal, the decision and the ledger row all stay.
    """

    class Kind(models.TextChoices):
        PRESALE_EXPIRED_COUPON = "PRESALE_EXPIRED_COUPON"
        ORDER_DISCOUNT_REFUND = "ORDER_DISCOUNT_REFUND"
        REVERSE_OPERATION = "REVERSE_OPERATION"  # undo `operation`: restore the state before it
        MONEY = "MONEY"  # an amount owed because of `operation`; the coupon's state stays

    class Status(models.TextChoices):
        PROPOSED = "PROPOSED"
        APPROVED = "APPROVED"
        REJECTED = "REJECTED"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    order_id = models.CharField(max_length=64, db_index=True, blank=True)
    coupon = models.ForeignKey("coupons.UserCoupon", on_delete=models.PROTECT, related_name="+")
    # The ledger operation an operator's proposal is about; NULL for the shortfall kinds,
    # which name an order instead.
    operation = models.ForeignKey(
        "coupons.CouponOperation", null=True, blank=True, on_delete=models.PROTECT,
        related_name="compensations",
    )
    amount = models.DecimalField(  # NULL for a reversal: it restores a state, it pays nothing
        max_digits=12, decimal_places=2, null=True, blank=True
    )
    reason = models.CharField(max_length=500)
    created_by = models.CharField(max_length=128, help_text="Who proposed it.")
    created_at = models.DateTimeField()
    # The proposal's own Idempotency-Key and request hash ("" for system-recorded shortfalls).
    idempotency_key = models.CharField(max_length=255, blank=True)
    request_hash = models.CharField(max_length=64, blank=True)
    decided_by = models.CharField(max_length=128, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.CharField(max_length=1000, blank=True)
    # The REVERSE or COMPENSATE ledger row its approval appended.
    resulting_operation = models.OneToOneField(
        "coupons.CouponOperation", null=True, blank=True, on_delete=models.PROTECT,
        related_name="compensation_decision",
    )

    class Meta:
        constraints = [
            # The same shortfall reported twice (a redelivered fact) is one compensation.
            models.UniqueConstraint(fields=["order_id", "coupon", "kind"],
                                    condition=models.Q(operation__isnull=True),
                                    name="one_compensation_per_shortfall"),
            # Two operators proposing for the same operation at once: one proposal waits.
            models.UniqueConstraint(fields=["operation"],
                                    condition=models.Q(status="PROPOSED"),
                                    name="one_open_compensation_per_operation"),
        ]

    def __str__(self):
        return f"{self.kind} {self.amount} for {self.order_id} ({self.status})"

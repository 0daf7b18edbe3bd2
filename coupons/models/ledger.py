from django.db import models

from coupons.models.append_only import AppendOnlyModel, append_only_triggers
from coupons.models.journal import Journaled


class OperationType(models.TextChoices):
    # Stable values: stored in the ledger and the outbox, never renamed.
    ISSUE = "ISSUE"
    LOCK = "LOCK"
    RENEW = "RENEW"
    REDEEM = "REDEEM"
    RELEASE = "RELEASE"
    EXPIRE = "EXPIRE"
    VOID = "VOID"
    RETURN = "RETURN"
    REVERSE = "REVERSE"
    # A money compensation: same state, version +1, the amount owed on the row.
    COMPENSATE = "COMPENSATE"


class CouponOperation(Journaled, AppendOnlyModel):
    """The immutable ledger: one row per successful state change of a coupon."""

    # What only holders of VIEW_CASE_DETAILS see (coupons.redaction): the row an approved
    # compensation appended repeats the compensation's reason and amount (its reason's values
    # hold that reason too).
    detail_fields = ()
    detail_fields_by_op_type = {
        OperationType.REVERSE: ("reason", "reason_params", "amount"),
        OperationType.COMPENSATE: ("reason", "reason_params", "amount"),
    }

    coupon = models.ForeignKey(
        "coupons.UserCoupon", on_delete=models.PROTECT, related_name="operations"
    )
    op_type = models.CharField(max_length=16, choices=OperationType.choices)
    from_state = models.CharField(max_length=16, blank=True)  # "" for ISSUE
    to_state = models.CharField(max_length=16)
    from_version = models.PositiveIntegerField()  # 0 for ISSUE
    to_version = models.PositiveIntegerField()
    actor = models.CharField(max_length=128)
    order_id = models.CharField(max_length=64, blank=True)
    lock = models.ForeignKey(
        "coupons.CouponLock", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    payment_id = models.CharField(max_length=64, blank=True)
    refund_id = models.CharField(max_length=64, blank=True)
    idempotency_key = models.CharField(max_length=255, blank=True)
    request_hash = models.CharField(max_length=64, blank=True)
    original_operation = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reversals"
    )
    reason = models.CharField(max_length=500, blank=True)  # in English, as written (the record)
    # Which sentence the reason is and its values, for readers in other languages
    # (coupons/ledger_reasons.py); empty on rows written before the codes and on typed reasons.
    reason_code = models.CharField(max_length=32, blank=True, default="", db_default="")
    reason_params = models.JSONField(null=True, blank=True, default=None)
    # Money owed, on COMPENSATE rows only; NULL elsewhere.
    amount = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            # Two writers can never both claim the same step of one coupon's history.
            models.UniqueConstraint(fields=["coupon", "to_version"], name="ledger_version_unique"),
        ]
        indexes = [models.Index(fields=["coupon", "created_at"], name="ledger_coupon_time")]
        ordering = ["coupon", "to_version"]
        triggers = append_only_triggers()

    def __str__(self):
        return (
            f"{self.op_type} coupon {self.coupon_id} {self.from_state or '∅'}→{self.to_state} "
            f"v{self.from_version}→v{self.to_version}"
        )


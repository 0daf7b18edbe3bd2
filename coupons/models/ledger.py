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

    # The chain columns are derived from the rest under a key; the journal holds the row.
    JOURNAL_LEAVES_OUT = ("prev_hash", "content_hash", "chain_key_id")

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
    # Both empty by default, so the chain's content of every existing row is unchanged.
    reason_code = models.CharField(max_length=32, blank=True, default="", db_default="")
    reason_params = models.JSONField(null=True, blank=True, default=None)
    # Money owed, on COMPENSATE rows only; NULL elsewhere (and left out of content hashes).
    amount = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    created_at = models.DateTimeField()
    # The coupon's keyed hash chain (coupons/evidence/ledger_chain.py): an edit past the database's
    # triggers shows in the per-coupon check. A column added later must be nullable or blank by
    # default, or it changes the canonical content of every existing row.
    prev_hash = models.CharField(max_length=64, blank=True)
    content_hash = models.CharField(max_length=64)
    # The LEDGER_CHAIN_KEYS key id of content_hash; "" on rows written before the chain was keyed.
    chain_key_id = models.CharField(max_length=32, blank=True)

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


class UnkeyedLedgerPrefix(AppendOnlyModel):
    """How far a coupon's ledger went before the chain was keyed (migration 0015), sealed.

    Those rows keep their unkeyed SHA-256 hashes; this row pins them (the hash of the last one)
    and marks any unkeyed row after it, or on a coupon without this row, as forged.
    """

    coupon = models.OneToOneField("coupons.UserCoupon", on_delete=models.PROTECT,
                                  primary_key=True, related_name="unkeyed_ledger_prefix")
    through_version = models.PositiveIntegerField()
    head_hash = models.CharField(max_length=64)
    seal = models.CharField(max_length=100)  # "<key id>:<HMAC>" (coupons.evidence.ledger_chain)

    class Meta:
        triggers = append_only_triggers()

    def __str__(self):
        return f"coupon {self.coupon_id} unkeyed through v{self.through_version}"

from django.db import models

from coupons.models.append_only import AppendOnlyModel, append_only_triggers
from coupons.models.journal import Journaled


class CommandRejection(Journaled, AppendOnlyModel):
    """A refused command, kept beside the ledger so support can see what was refused and why.

    Never holds a token or token hash.
    """

    JOURNAL_COUPON = "coupon_id_ref"

    op_type = models.CharField(max_length=16)
    coupon_id_ref = models.BigIntegerField(null=True, blank=True, db_index=True)
    order_id = models.CharField(max_length=64, blank=True)
    actor = models.CharField(max_length=128)
    error_code = models.CharField(max_length=64)
    message = models.CharField(max_length=500)  # in English, as written (the record)
    # Which sentence a message that is no catalogue entry as it stands is, and its values
    # (coupons/refusal_messages.py); empty on rows written before the codes.
    message_code = models.CharField(max_length=32, blank=True, default="", db_default="")
    message_params = models.JSONField(null=True, blank=True, default=None)
    details = models.JSONField(default=dict)
    idempotency_key = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["coupon_id_ref", "created_at"], name="rejection_coupon_time"),
        ]
        ordering = ["created_at", "id"]
        triggers = append_only_triggers()

    def __str__(self):
        return f"{self.op_type} refused {self.error_code} (coupon {self.coupon_id_ref})"

from django.db import models


class CheckWatermark(models.Model):
    """How far one coupon's check has verified its ledger (coupons/evidence/check_watermark.py).

    A cache, not evidence: it moves forward as the check verifies newer rows, and a row that
    is forged, stale or sealed under a key LEDGER_CHAIN_KEYS no longer holds is ignored (the
    check then re-verifies the whole ledger). Nothing else reads it.
    """

    coupon = models.OneToOneField(
        "coupons.UserCoupon", primary_key=True, on_delete=models.CASCADE, related_name="+")
    through_version = models.PositiveIntegerField()
    # The content_hash of the row at through_version: the rows after it must chain from it.
    head_hash = models.CharField(max_length=64)
    # The database's fingerprint of the rows up to through_version
    # (coupons/evidence/check_watermark.py): an edit, insert or delete among them, triggers bypassed
    # or not, changes it.
    prefix_digest = models.CharField(max_length=64)
    # The replay's state after through_version, and how far the other evidence was read.
    snapshot = models.JSONField()
    verified_at = models.DateTimeField()
    # "<key id>:<HMAC of every column above>" under LEDGER_CHAIN_KEYS.
    seal = models.CharField(max_length=100)

    def __str__(self):
        return f"coupon {self.coupon_id} verified through v{self.through_version}"

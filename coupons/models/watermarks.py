from django.db import models


class CheckWatermark(models.Model):
    """How far one coupon's check has verified its ledger (coupons/evidence/check_watermark.py).

    A cache, not evidence: it moves forward over the rows a verified signed head covers, and a
    row that is forged, stale, sealed under another SECRET_KEY or resting on more than the
    newest verified head signed is ignored (the check then re-verifies the whole ledger).
    Nothing else reads it.
    """

    coupon = models.OneToOneField(
        "coupons.UserCoupon", primary_key=True, on_delete=models.CASCADE, related_name="+")
    through_version = models.PositiveIntegerField()
    # The hash of the journal entry of the row at through_version: the row the check resumes
    # after must still be that one.
    head_hash = models.CharField(max_length=64)
    # The journal size of the signed head whose log covers the entries of every row up to
    # through_version: trusted only while the newest verified head signs at least this.
    signed_size = models.BigIntegerField()
    # The replay's state after through_version, and how far the other evidence was read.
    snapshot = models.JSONField()
    verified_at = models.DateTimeField()
    # HMAC-SHA256 of every column above under SECRET_KEY (django.utils.crypto.salted_hmac).
    seal = models.CharField(max_length=100)

    def __str__(self):
        return f"coupon {self.coupon_id} verified through v{self.through_version}"

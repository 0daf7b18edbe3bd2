from django.db import models

from coupons.capabilities import Capability
from coupons.models.state_moves import state_moves_triggers


class CouponStatus(models.TextChoices):
    AVAILABLE = "AVAILABLE"
    LOCKED = "LOCKED"
    USED = "USED"
    EXPIRED = "EXPIRED"
    VOID = "VOID"


class UserCoupon(models.Model):
    """One coupon in one user's wallet. Only coupons.services writes status and state_version."""

    user_id = models.CharField(max_length=64)
    template = models.ForeignKey("coupons.CouponTemplate", on_delete=models.PROTECT)
    template_version = models.ForeignKey("coupons.CouponTemplateVersion", on_delete=models.PROTECT)
    status = models.CharField(max_length=16, choices=CouponStatus.choices)
    state_version = models.PositiveIntegerField()
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    issued_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    # The current lease binding, set together by LOCK and cleared together. NULL (not "")
    # when unbound, so the CHECK constraint and the CAS WHERE treat "no owner" as no value.
    current_lock = models.ForeignKey(
        "coupons.CouponLock", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    locked_order_id = models.CharField(  # noqa: DJ001
        max_length=64, null=True, blank=True, db_index=True
    )
    lock_token_hash = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    lock_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["user_id", "status"], name="coupon_user_status"),
            # A user's wallet page (coupons?user_id=, in id order) reads its rows in order.
            models.Index(fields=["user_id", "id"], name="coupon_user_id"),
            # The expiry scanner walks AVAILABLE coupons by valid_until, the lease scanner
            # LOCKED coupons by lease end: both with a (time, id) keyset cursor.
            models.Index(fields=["status", "valid_until", "id"], name="coupon_status_expiry"),
            models.Index(fields=["status", "lock_expires_at", "id"], name="coupon_status_lease"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(status="LOCKED", current_lock__isnull=False,
                             locked_order_id__isnull=False, lock_token_hash__isnull=False)
                    | (~models.Q(status="LOCKED") & models.Q(
                        current_lock__isnull=True, locked_order_id__isnull=True,
                        lock_token_hash__isnull=True))
                ),
                name="coupon_locked_iff_bound",
            ),
        ]
        # Status, version and lease move only as coupons/write/transitions.py says.
        triggers = state_moves_triggers()
        # Every capability of coupons.capabilities, so groups and users hold them as usual.
        permissions = Capability.choices

    def __str__(self):
        return f"coupon {self.pk} ({self.status} v{self.state_version})"

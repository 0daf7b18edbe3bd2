import uuid

from django.db import models

from coupons.models.append_only import append_only_triggers
from coupons.models.journal import Journaled


class LockStatus(models.TextChoices):
    ACTIVE = "ACTIVE"
    CONSUMED = "CONSUMED"  # ended by REDEEM
    RELEASED = "RELEASED"  # ended by RELEASE or VOID


class CouponLock(models.Model):
    """One lease of a coupon by one order. The token is never stored, only its SHA-256."""

    # A UUID so the token (an HMAC of this id) can be derived before the row exists.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    coupon = models.ForeignKey("coupons.UserCoupon", on_delete=models.PROTECT, related_name="locks")
    order_id = models.CharField(max_length=64, db_index=True)
    token_hash = models.CharField(max_length=64)
    # Which LEASE_TOKEN_SECRETS key the token was derived under: a replayed LOCK derives it again
    # under that key, and removing the key from settings retires every token made with it.
    token_key_id = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=LockStatus.choices, default=LockStatus.ACTIVE)
    locked_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    acquired_version = models.PositiveIntegerField(
        help_text="The coupon's state_version right after this LOCK."
    )
    ended_at = models.DateTimeField(null=True, blank=True)
    client = models.ForeignKey(
        "coupons.ServiceClient", on_delete=models.PROTECT, null=True, blank=True,
        related_name="+",
        help_text="The service client that took the lease: only it may renew, redeem or "
                  "release it. Empty when a console user or the coordinator took it.",
    )

    class Meta:
        constraints = [
            # Invariant 1: at most one active lease per coupon, enforced by the database too.
            models.UniqueConstraint(
                fields=["coupon"], condition=models.Q(status="ACTIVE"), name="one_active_lock"
            ),
        ]

    def __str__(self):
        return f"lock {self.pk} of coupon {self.coupon_id} by {self.order_id} ({self.status})"


class OrderCoupon(Journaled):
    """The order's evidence of its discount: quote and amounts frozen at LOCK (journaled)."""

    lock = models.OneToOneField(CouponLock, on_delete=models.PROTECT, related_name="order_coupon")
    coupon = models.ForeignKey(
        "coupons.UserCoupon", on_delete=models.PROTECT, related_name="order_links"
    )
    order_id = models.CharField(max_length=64, db_index=True)
    quote_id = models.CharField(max_length=64, blank=True)
    order_amount = models.DecimalField(max_digits=12, decimal_places=2)
    discount_amount = models.DecimalField(max_digits=12, decimal_places=2)
    template_version = models.ForeignKey("coupons.CouponTemplateVersion", on_delete=models.PROTECT)
    created_at = models.DateTimeField()

    class Meta:
        # The order's binding to the coupon is evidence (reconciliation, refunds read it): a
        # LOCK writes it and nothing ever changes or removes it.
        triggers = append_only_triggers()

    def __str__(self):
        return f"order {self.order_id} ← coupon {self.coupon_id} (-{self.discount_amount})"

from django.db import models


class OutboxEvent(models.Model):
    """Domain events written in the command's transaction, published after commit by a relay."""

    event_type = models.CharField(max_length=64)  # CouponLocked, CouponRedeemed, ...
    coupon = models.ForeignKey("coupons.UserCoupon", on_delete=models.PROTECT, related_name="+")
    operation = models.OneToOneField(
        "coupons.CouponOperation", on_delete=models.PROTECT, related_name="outbox_event"
    )
    payload = models.JSONField()
    created_at = models.DateTimeField()
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["id"], condition=models.Q(published_at__isnull=True),
                name="outbox_unpublished",
            ),
        ]

    def __str__(self):
        return f"{self.event_type} #{self.pk}"

import pgtrigger
from django.db import models

from coupons.models.append_only import OnDatabaseClock, Refuse, delete_refused, frozen_except


class OutboxEvent(models.Model):
    """Domain events written in the command's transaction, published after commit by a relay."""

    event_type = models.CharField(max_length=64)  # CouponLocked, CouponRedeemed, ...
    # Null only for an event about the whole ledger (LedgerCheckpointed); the relay keeps such
    # events in id order among themselves and sends them from shard 0.
    coupon = models.ForeignKey(
        "coupons.UserCoupon", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Null only for a notification that changes no state (CouponExpiresBeforeFinalPayment,
    # recorded by ExpiryWarning): every state change has its ledger row here.
    operation = models.OneToOneField(
        "coupons.CouponOperation", null=True, blank=True, on_delete=models.PROTECT,
        related_name="outbox_event",
    )
    payload = models.JSONField()
    created_at = models.DateTimeField()
    # When the database recorded the publish, on its own clock (`published_on_database_clock`
    # overwrites whatever the writer sent): prune measures retention from it, so no writer can
    # age an event into deletion.
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["id"], condition=models.Q(published_at__isnull=True),
                name="outbox_unpublished",
            ),
        ]
        # The relay marks an event published once; the event itself never changes.
        # Deletes: `manage.py prune` alone deletes, as PRUNER_ROLE, published rows past their
        # retention; `unpublished_kept` holds for every role, so no one, prune included, can
        # delete an event the relay has not published yet.
        triggers = [
            *delete_refused(pruned=True),
            Refuse(
                name="unpublished_kept", operation=pgtrigger.Delete,
                condition=pgtrigger.Q(old__published_at__isnull=True),
            ),
            # Wakes a waiting relay (operations/relay.py) when the command's transaction commits.
            pgtrigger.Trigger(
                name="notify_relay", operation=pgtrigger.Insert, when=pgtrigger.After,
                level=pgtrigger.Statement,
                func="PERFORM pg_notify('coupons_outbox', ''); RETURN NULL;",
            ),
            *frozen_except("published_at"),
            OnDatabaseClock(name="published_on_database_clock", column="published_at"),
            Refuse(
                name="published_once", operation=pgtrigger.Update,
                condition=pgtrigger.Q(
                    old__published_at__isnull=False,
                    old__published_at__df=pgtrigger.F("new__published_at"),
                ),
            ),
        ]

    def __str__(self):
        return f"{self.event_type} #{self.pk}"

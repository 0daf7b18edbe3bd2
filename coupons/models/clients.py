from django.db import models

from coupons.capabilities import Capability


class ServiceClient(models.Model):
    """A machine caller (order, payment, refund service). Only the key's SHA-256 is stored.

    It may do only what it was granted: `capabilities` (values of `Capability`) and the fact
    types it may send to the inbox. A new client is granted nothing.
    """

    name = models.CharField(max_length=100, unique=True)
    key_prefix = models.CharField(max_length=8, help_text="First characters, to tell keys apart.")
    key_hash = models.CharField(max_length=64, unique=True)
    is_active = models.BooleanField(default=True)
    capabilities = models.JSONField(default=list, blank=True)
    fact_types = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()

    # DRF's IsAuthenticated asks request.user this.
    is_authenticated = True

    def __str__(self):
        return self.name

    @property
    def actor(self) -> str:
        return f"client:{self.name}"

    @property
    def idempotency_scope(self) -> str:
        return f"client:{self.pk}"

    def has_capability(self, capability: Capability) -> bool:
        if capability == Capability.POST_FACTS:
            return bool(self.fact_types)
        return capability in self.capabilities

    def may_send(self, fact_type: str) -> bool:
        return fact_type in self.fact_types

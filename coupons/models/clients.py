from django.db import models


class ServiceClient(models.Model):
    """A machine caller (order, payment, refund service). Only the key's SHA-256 is stored."""

    name = models.CharField(max_length=100, unique=True)
    key_prefix = models.CharField(max_length=8, help_text="First characters, to tell keys apart.")
    key_hash = models.CharField(max_length=64, unique=True)
    is_active = models.BooleanField(default=True)
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

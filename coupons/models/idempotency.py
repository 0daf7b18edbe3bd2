from django.db import models


class IdempotencyRecord(models.Model):
    """One Idempotency-Key of one caller: the request it named and the answer it got."""

    # What only holders of VIEW_CASE_DETAILS see (coupons.redaction).
    detail_fields = ("request_hash", "response_body")

    class Status(models.TextChoices):
        IN_PROGRESS = "IN_PROGRESS"
        COMPLETED = "COMPLETED"

    scope = models.CharField(max_length=80, help_text="client:<id> or user:<id>")
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices)
    # A lease token is never part of the stored body; a LOCK replay re-derives it.
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    # HMAC under IDEMPOTENCY_SEAL_SECRET of everything above (coupons/write/idempotency_seal.py):
    # a record that does not carry it is never replayed.
    seal = models.CharField(max_length=200, blank=True, default="")
    claimed_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "key"], name="idempotency_scope_key"),
        ]

    def __str__(self):
        return f"{self.scope} {self.key} ({self.status})"

from django.db import models


class PruneRun(models.Model):
    """One `manage.py prune`: its cutoffs and what it removed.

    The ledger check (coupons/evidence/replay.py) reads `outbox_before`: an operation older than a
    prune's outbox cutoff may have lost its (published) outbox row to retention, not to a bug.
    """

    ran_at = models.DateTimeField()
    outbox_before = models.DateTimeField()
    idempotency_before = models.DateTimeField()
    inbox_before = models.DateTimeField()
    outbox_deleted = models.PositiveIntegerField()
    idempotency_deleted = models.PositiveIntegerField()
    inbox_deleted = models.PositiveIntegerField()

    def __str__(self):
        return f"prune at {self.ran_at:%Y-%m-%d %H:%M}"

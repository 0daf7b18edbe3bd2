from django.db import models

from coupons.models.append_only import AppendOnlyModel, append_only_triggers
from coupons.models.journal import Journaled


class LedgerCheckpoint(AppendOnlyModel, Journaled):
    """A signed head of the journal's Merkle log (operations/checkpoint.py).

    `body` is the exact signed text (canonical JSON); the other columns repeat it for queries
    and pages. The signature, not the database, vouches for it: a row edited behind the
    triggers no longer verifies, and a copy lives outside the database (the outbox event and
    the file in LEDGER_CHECKPOINT_DIR). Each row is also a journal entry, written with it, so
    the next checkpoint's journal head covers the one before.
    """

    JOURNAL_OPENS = ("signed", "existing")
    JOURNAL_COUPON = None  # about every coupon: folded by verify_journal, not per coupon

    number = models.PositiveIntegerField(unique=True)
    signed_at = models.DateTimeField()
    key_id = models.CharField(max_length=32)
    body = models.TextField()
    signature = models.CharField(max_length=128)

    class Meta:
        ordering = ["number"]
        triggers = append_only_triggers()

    def __str__(self):
        return f"checkpoint {self.number}"

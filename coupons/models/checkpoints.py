from django.db import models

from coupons.models.append_only import AppendOnlyModel, append_only_triggers
from coupons.models.journal import Journaled


class LedgerCheckpoint(AppendOnlyModel, Journaled):
    """A signed Merkle root over every coupon's chain head (coupons/checkpoints.py).

    `body` is the exact signed text (canonical JSON); the other columns repeat it for queries
    and pages. The signature, not the database, vouches for it: a row edited behind the
    triggers no longer verifies, and a copy lives outside the database (the outbox event and
    the file in LEDGER_CHECKPOINT_DIR). Each row is also a journal entry, written with it, so
    the next checkpoint's journal head covers the one before.
    """

    JOURNAL_OPENS = ("signed", "existing")
    JOURNAL_COUPON = None  # about every coupon: folded by verify_journal, not per coupon
    # The journal records what was signed (`body`: number, time, key id, the ledger's and the
    # journal's size and root), its signature, and the columns a reader queries by; the rest
    # repeat the body or are derived from the stored chunks.
    JOURNAL_LEAVES_OUT = ("tree_size", "root", "chunk_roots", "chunk_first_ids")

    number = models.PositiveIntegerField(unique=True)
    tree_size = models.PositiveBigIntegerField()
    root = models.CharField(max_length=64)
    signed_at = models.DateTimeField()
    key_id = models.CharField(max_length=32)
    body = models.TextField()
    signature = models.CharField(max_length=128)
    # What makes a proof cheap: the roots of the tree's CHUNK-leaf subtrees (hex) and the
    # first coupon id of each, so a proof reads this row and one chunk, never every leaf.
    chunk_roots = models.JSONField()
    chunk_first_ids = models.JSONField()

    class Meta:
        ordering = ["number"]
        triggers = append_only_triggers()

    def __str__(self):
        return f"checkpoint {self.number} ({self.tree_size} coupons)"


class LedgerCheckpointChunk(AppendOnlyModel):
    """Up to merkle.CHUNK leaves, stored once by their subtree's root and shared by every
    checkpoint in which none of these coupons changed."""

    root = models.CharField(max_length=64, unique=True)
    # [[coupon_id, version, head_hash], ...] in coupon id order.
    entries = models.JSONField()

    class Meta:
        triggers = append_only_triggers()

    def __str__(self):
        return f"chunk {self.root[:12]}"

from django.db import models

from coupons.models.append_only import AppendOnlyModel, append_only_triggers

# A row's last entry when retention deleted the row (its entries stay: the journal is never
# pruned). Only the prune function writes it, in the statement that deletes the row.
PRUNED = "pruned"


class Journaled(models.Model):
    """A read-model row whose every write is a journal entry (coupons/evidence/journal.py).

    The row is the fast answer; the journal is the record. The row must equal the fold of its
    entries: the first entry (one of JOURNAL_OPENS) holds every column, each later one (one of
    JOURNAL_STEPS) the columns it moved, which must be among those its kind may move
    (`journal_moves`). The database writes the entries (coupons/evidence/journal_sql.py) and
    refuses a step that moves any other column.
    """

    # Every model also opens with "existing" (coupons.evidence.journal.backfill): a row
    # written before the journal, as it was when the journal began. The default is a row
    # that is written once and never moves (a ledger row, a refusal, a note).
    JOURNAL_OPENS: tuple[str, ...] = ("recorded", "existing")
    JOURNAL_STEPS: tuple[str, ...] = ()
    JOURNAL_MOVES: tuple[str, ...] = ()
    # The columns one step may move, where a step may move fewer than JOURNAL_MOVES (an
    # approval moves the review's columns, never the action it approves).
    JOURNAL_STEP_MOVES: dict[str, tuple[str, ...]] = {}
    # The column that says which coupon the row is about (the per-coupon check and proof).
    JOURNAL_COUPON = "coupon_id"
    # Columns that are not evidence (a finding's `last_seen_at`, which every run moves).
    JOURNAL_LEAVES_OUT: tuple[str, ...] = ()

    class Meta:
        abstract = True

    @classmethod
    def journal_moves(cls, kind: str) -> tuple[str, ...]:
        """The columns a `kind` step may move (none for a kind that is no step)."""
        if kind not in cls.JOURNAL_STEPS:
            return ()
        return cls.JOURNAL_STEP_MOVES.get(kind, cls.JOURNAL_MOVES)


class JournalEntry(AppendOnlyModel):
    """One evidence fact: what a command wrote to a read-model row, as canonical JSON.

    `content` is the fact; `content_hash` its SHA-256, which anyone can recompute. The entries
    of one row form a chain: each names its parent (the row's previous entry) by hash, and the
    unique constraints let a row have one first entry and every entry at most one child, so
    history can only grow at its tip. The other columns repeat what `content` says, for the
    indexes; the checks hold them to it.
    """

    subject = models.CharField(max_length=64, help_text="The row's table, as app.model.")
    subject_id = models.BigIntegerField()
    kind = models.CharField(max_length=32)
    actor = models.CharField(max_length=128)
    parent_hash = models.CharField(max_length=64, null=True, blank=True, unique=True)
    content = models.TextField()
    content_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["subject", "subject_id"],
                                    condition=models.Q(parent_hash__isnull=True),
                                    name="one_journal_root_per_row"),
        ]
        indexes = [
            models.Index(fields=["subject", "subject_id", "id"], name="journal_subject_idx"),
        ]
        triggers = append_only_triggers()
        verbose_name_plural = "journal entries"

    def __str__(self):
        return f"journal {self.pk}: {self.subject} {self.subject_id} {self.kind}"


class JournalLeaf(AppendOnlyModel):
    """The journal's Merkle log (RFC 9162): the entry at log position `index`.

    Positions are given after commit, consecutively, by one writer: the sequencer function
    (`operations/db_roles.py`, SECURITY DEFINER, owned by its own role; the application role
    may call it but not INSERT here). An entry that commits late gets the next position, never
    one below a size already signed. `leaf_hash` is SHA-256(0x00 || content), computed by the
    database from the entry's content; the signer recomputes it.
    """

    index = models.BigIntegerField(primary_key=True)
    entry = models.OneToOneField(JournalEntry, on_delete=models.PROTECT, related_name="leaf")
    leaf_hash = models.CharField(max_length=64)
    sequenced_at = models.DateTimeField()

    class Meta:
        triggers = append_only_triggers()

    def __str__(self):
        return f"log {self.index}: journal {self.entry_id}"


class JournalNode(AppendOnlyModel):
    """The hash of a complete subtree of the journal's log: the 2^level leaves from position
    `position` * 2^level on (level 1 and up; level 0 is `JournalLeaf.leaf_hash`).

    Written by the sequencer alone (`operations/db_roles.py`), in the statement that gives the
    subtree's last leaf its position, and never changed: any node, inclusion path or
    consistency proof of any signed size is read from O(log n) of them (coupons/evidence/
    merkle.py `pieces`), so a proof costs the same at any journal length. Nothing trusts them:
    whoever checks a proof checks it against the signed root.
    """

    level = models.PositiveSmallIntegerField()
    position = models.BigIntegerField()
    hash = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["level", "position"],
                                               name="one_journal_node_per_place")]
        triggers = append_only_triggers()

    def __str__(self):
        return f"log node {self.level}/{self.position}"

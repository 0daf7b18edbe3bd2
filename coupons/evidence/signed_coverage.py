"""Which journaled rows the newest verified signed head covers: the rows a check may skip.

A row is covered when every one of its journal entries has a log position below the journal
size that the newest checkpoint verifying under the verifying key signed
(coupons.evidence.checkpoint_proofs.latest_checkpoint: its signature;
a row any login INSERTs into the checkpoint table does not verify and covers nothing). Once
covered, a row rewritten past the services is the signer's (it refuses to sign a log that is
not an extension of the one it signed) and `verify_ledger`'s (it folds every row) to name; a
row not covered yet is read again by every check.
"""

import json

from django.db.models.expressions import RawSQL

from coupons.models import JournalEntry, JournalLeaf

ENTRIES = JournalEntry._meta.db_table
LEAVES = JournalLeaf._meta.db_table


def signed_size(checkpoint) -> int:
    """The journal size `checkpoint` (verified, or None) signed; 0 when it signs none."""
    if checkpoint is None:
        return 0
    return json.loads(checkpoint.body).get("journal_size") or 0


def with_log_position(queryset):
    """The queryset's rows with `log_position`: the highest log position of their entries, or
    None when one of them has none yet (or the row has no entry), read in the same statement."""
    model = queryset.model
    return queryset.annotate(log_position=RawSQL(
        f"(SELECT CASE WHEN count(*) = count(l.index) THEN max(l.index) END "  # noqa: S608
        f"FROM {ENTRIES} j LEFT JOIN {LEAVES} l ON l.entry_id = j.id WHERE j.subject = %s "
        f"AND j.subject_id = {model._meta.db_table}.{model._meta.pk.column})",
        [model._meta.label_lower]))


def covered_prefix(rows, size: int) -> int:
    """How many of `rows` (read with_log_position), from the first on, the signed `size`
    covers: a check may move its mark over these and no further."""
    count = 0
    for row in rows:
        if row.log_position is None or row.log_position >= size:
            break
        count += 1
    return count

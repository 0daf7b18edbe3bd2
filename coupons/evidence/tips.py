"""A journaled row's tip: the hash of its newest journal entry.

The tip names the version of a row a person was shown. An approval carries the tip of what the
operator saw and is refused when the row's tip moved since (coupons.errors.EvidenceChanged),
so a row moved while the page was open, by the services or past them, is never decided as
though it were the one shown. Every read of a tip goes through here: the newest entry of
(subject, subject_id) by id, whoever writes the entries.
"""

import hmac

from django.db.models import OuterRef, Subquery

from coupons.errors import EvidenceChanged
from coupons.models import JournalEntry


def _newest_entry(model, subject_id):
    return (JournalEntry.objects.filter(subject=model._meta.label_lower, subject_id=subject_id)
            .order_by("-id").values("content_hash")[:1])


def with_journal_tip(queryset):
    """The queryset's rows with `journal_tip`, read in the same statement as the row: the
    version a page shows and the tip its forms carry are one snapshot."""
    return queryset.annotate(journal_tip=Subquery(_newest_entry(queryset.model, OuterRef("pk"))))


def require_tip(row, seen_entry: str) -> None:
    """Refuse to decide on `row` (its `journal_tip` known from the fold that checked it) when
    its newest entry is not the one the decider saw (EVIDENCE_CHANGED)."""
    if not hmac.compare_digest(str(seen_entry).encode(), str(row.journal_tip).encode()):
        raise EvidenceChanged(table=row._meta.label_lower, id=row.pk, seen_entry=seen_entry,
                              journal_tip=row.journal_tip)


def journal_tip(model, subject_id) -> str | None:
    """The tip of one row, read on its own (a script or a caller that read the row before)."""
    newest = list(_newest_entry(model, subject_id))
    return newest[0]["content_hash"] if newest else None

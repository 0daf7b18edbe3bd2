"""What the signer checks before it signs journal entries: every row they are about is still
the fold of its entries (`ledger_checkpoint`, operations/checkpoint.py).

Only the log positions new since the signer's last own head are read, so a checkpoint costs
in proportion to what was written since, not to the history: for each row one of them is
about, the row and all of its entries (a row has few) are read in the signer's snapshot and
folded. A row that is gone (unless its last entry is retention's `pruned`) or differs from its
fold was rolled back or rewritten before the signer saw it: refused, naming the entry, the row
and its coupon. Rows whose entries were all signed before are the auditor's (`verify_ledger`)
and the per-coupon check's to fold again.
"""

import json

from django.db import connection

from coupons.evidence.journal import (
    entry_columns_problem,
    fold_problem,
    journaled_models,
    with_journal,
)
from coupons.models import JournalEntry
from coupons.models.journal import PRUNED

PAGE = 5000
BATCH = 1000  # rows folded per query


def _pages(since: int):
    """(position, entry) of every log position from `since` on, by pages."""
    position = since
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT l.index, e.id, e.subject, e.subject_id, e.kind, e.actor, "
                "e.parent_hash, e.content, e.content_hash FROM coupons_journalleaf l "
                "JOIN coupons_journalentry e ON e.id = l.entry_id WHERE l.index >= %s "
                "ORDER BY l.index LIMIT %s", [position, PAGE])
            rows = cursor.fetchall()
        yield [(index, JournalEntry(pk=pk, subject=subject, subject_id=subject_id, kind=kind,
                                    actor=actor, parent_hash=parent, content=content,
                                    content_hash=digest))
               for index, pk, subject, subject_id, kind, actor, parent, content, digest in rows]
        if len(rows) < PAGE:
            return
        position = rows[-1][0] + 1


def _named(position: int, entry, coupon) -> str:
    about = f" of coupon {coupon}" if coupon is not None else ""
    return (f"journal entry {entry.pk} (log position {position}), {entry.subject} "
            f"{entry.subject_id}{about}")


def unfolded_rows(since: int) -> list[str]:
    """One sentence per row that a log position from `since` on is about and that is not
    the fold of its entries (gone, or different), and per entry there that is not what its
    hash and columns say."""
    models = {model._meta.label_lower: model for model in journaled_models()}
    problems, about = [], {}  # about: label -> {row id: (position, entry)}, the first one
    for page in _pages(since):
        for position, entry in page:
            problem = entry_columns_problem(entry)
            if problem is None and entry.subject not in models:
                problem = f"is about {entry.subject}, which has no journal"
            if problem is not None:
                problems.append(f"{_named(position, entry, None)}: {problem}")
                continue
            about.setdefault(entry.subject, {}).setdefault(entry.subject_id, (position, entry))
    for label, rows in about.items():
        ids = sorted(rows)
        for start in range(0, len(ids), BATCH):
            problems += _batch_problems(models[label], {pk: rows[pk]
                                                        for pk in ids[start:start + BATCH]})
    return problems


def _batch_problems(model, rows: dict) -> list[str]:
    problems = []
    coupon_column = model.JOURNAL_COUPON
    found = list(with_journal(model.objects.filter(pk__in=list(rows))))
    for row in found:
        problem = fold_problem(row)
        if problem is not None:
            position, entry = rows[row.pk]
            coupon = getattr(row, coupon_column) if coupon_column else None
            problems.append(f"{_named(position, entry, coupon)}: {problem}")
    gone = set(rows) - {row.pk for row in found}
    if gone:
        # Retention deletes some rows, each with a last `pruned` entry; any other is gone
        # past the services. Its coupon is in its first entry, which holds every column.
        journals = {}
        for subject_id, content in (JournalEntry.objects.filter(
                subject=model._meta.label_lower, subject_id__in=gone)
                .order_by("subject_id", "pk").values_list("subject_id", "content")):
            journals.setdefault(subject_id, []).append(json.loads(content))
        for pk in sorted(gone):
            entries = journals.get(pk, [])
            if entries and entries[-1].get("kind") == PRUNED:
                continue
            coupon = entries[0].get("row", {}).get(coupon_column) if (
                entries and coupon_column) else None
            position, entry = rows[pk]
            problems.append(f"{_named(position, entry, coupon)}: has journal entries but no "
                            "row (deleted past the services)")
    return problems

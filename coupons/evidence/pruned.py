"""Which prune runs the missing-event checks believe.

A PruneRun says retention removed the published outbox events older than its
`outbox_before`: an operation older than that may have lost its event to retention, not to a
bug. Only the prune function inserts these rows, its cutoff its window before the database's
clock (operations/db_roles.py), so an honest cutoff is never inside the retention window on
that clock, and with the row's journal entry. A row whose cutoff is (say one dated 2100,
which would excuse every missing event), or one without its entry, was written past the
triggers: the checks ignore it and `manage.py reconcile` names it.
"""

from datetime import timedelta

from django.conf import settings
from django.db.models import DateTimeField, Exists, ExpressionWrapper, Max, OuterRef, Q
from django.db.models.functions import Now

from coupons.models import JournalEntry, PruneRun


def _window_start() -> ExpressionWrapper:
    """The start of the outbox retention window on the database's clock."""
    window = timedelta(days=settings.COUPONS["OUTBOX_RETENTION_DAYS"])
    return ExpressionWrapper(Now() - window, output_field=DateTimeField())


def _journaled() -> Exists:
    return Exists(JournalEntry.objects.filter(subject=PruneRun._meta.label_lower,
                                              subject_id=OuterRef("pk")))


def outbox_pruned_before():
    """The latest outbox cutoff of a prune run the checks believe, or None."""
    believed = PruneRun.objects.filter(_journaled(), outbox_before__lte=_window_start())
    return believed.aggregate(before=Max("outbox_before"))["before"]


def unbelievable_prune_runs() -> list[tuple[PruneRun, str]]:
    """Prune runs prune never wrote, each with why: a cutoff inside the retention window, or
    no journal entry (prune writes the row and its entry in one transaction)."""
    runs = (PruneRun.objects.annotate(journaled=_journaled(),
                                      inside=Q(outbox_before__gt=_window_start()))
            .filter(Q(inside=True) | Q(journaled=False)).order_by("id"))
    return [(run, f"its outbox cutoff {run.outbox_before:%Y-%m-%d %H:%M} is inside the "
                  "retention window" if run.inside else "it has no journal entry")
            for run in runs]

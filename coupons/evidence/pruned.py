"""Which prune runs the missing-event checks believe.

A PruneRun says retention removed the published outbox events older than its
`outbox_before`: an operation older than that may have lost its event to retention, not to a
bug. Only the prune function inserts these rows, its cutoff its window before the database's
clock (operations/db_roles.py), so an honest cutoff is never inside the retention window on
that clock. A row whose cutoff is (say one dated 2100, which would excuse every missing
event) was written past the triggers: the checks ignore it and `manage.py reconcile` names it.
"""

from datetime import timedelta

from django.conf import settings
from django.db.models import DateTimeField, ExpressionWrapper, Max
from django.db.models.functions import Now

from coupons.models import PruneRun


def _window_start() -> ExpressionWrapper:
    """The start of the outbox retention window on the database's clock."""
    window = timedelta(days=settings.COUPONS["OUTBOX_RETENTION_DAYS"])
    return ExpressionWrapper(Now() - window, output_field=DateTimeField())


def outbox_pruned_before():
    """The latest outbox cutoff of a prune run the checks believe, or None."""
    believed = PruneRun.objects.filter(outbox_before__lte=_window_start())
    return believed.aggregate(before=Max("outbox_before"))["before"]


def unbelievable_prune_runs() -> list[PruneRun]:
    """Prune runs whose outbox cutoff is inside the retention window: never written by prune."""
    return list(PruneRun.objects.filter(outbox_before__gt=_window_start()).order_by("id"))

"""Retention: remove rows past their documented windows (settings.COUPONS, docs/events.md).

Never removed: an unpublished outbox row (also refused by its trigger), an IN_PROGRESS
Idempotency-Key claim, an inbox message a recorded fact still names (OrderFact.first_message).
The ledger, the journal, locks, redemptions and decisions are history and stay.

Everything happens inside `coupons_prune()` (operations/db_roles.py): the cutoffs come from
the database's clock and the windows baked into the function, the deletes run as the
functions' owner (the application role holds no DELETE on these tables, and their triggers
refuse every other deleter), and the function writes the PruneRun row itself (the
application role may not insert one).
"""

from django.db import connection, transaction

from coupons.models import PruneRun
from operations.db_roles import PRUNE_FUNCTION


def retention_prune() -> PruneRun:
    with transaction.atomic(durable=True), connection.cursor() as cursor:
        cursor.execute(f"SELECT {PRUNE_FUNCTION}()")
        [run_id] = cursor.fetchone()
    return PruneRun.objects.get(pk=run_id)

"""Retention: remove rows past their documented windows (settings.COUPONS, docs/events.md).

Never removed: an unpublished outbox row (also refused by its trigger), an IN_PROGRESS
Idempotency-Key claim, an inbox message a recorded fact still names (OrderFact.first_message).
The ledger itself, locks, redemptions and decisions are history and stay.

The deletes run inside the prune functions (operations/db_roles.py): the application role
holds no DELETE on these tables and their triggers refuse every deleter but the functions'
owner, which also refuses a cutoff inside a window on the database's clock.
"""

from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction

from coupons import clock
from coupons.models import PruneRun


def retention_prune() -> PruneRun:
    windows = settings.COUPONS
    now = clock.now()
    run = PruneRun(
        ran_at=now,
        outbox_before=now - timedelta(days=windows["OUTBOX_RETENTION_DAYS"]),
        idempotency_before=now - timedelta(hours=windows["IDEMPOTENCY_RETENTION_HOURS"]),
        inbox_before=now - timedelta(days=windows["INBOX_RETENTION_DAYS"]),
    )
    with transaction.atomic(durable=True):
        _prune_in_database(run)
        run.save()
    return run


def _prune_in_database(run: PruneRun) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coupons_prune_outbox(%s), coupons_prune_idempotency(%s),"
            " coupons_prune_inbox(%s)",
            [run.outbox_before, run.idempotency_before, run.inbox_before],
        )
        run.outbox_deleted, run.idempotency_deleted, run.inbox_deleted = cursor.fetchone()


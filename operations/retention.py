"""Retention: remove rows past their documented windows (settings.COUPONS, README "Events").

Never removed: an unpublished outbox row (also refused by its trigger), an IN_PROGRESS
Idempotency-Key claim, an inbox message a recorded fact still names (OrderFact.first_message).
The ledger itself, locks, redemptions and decisions are history and stay.
"""

from datetime import timedelta

import pgtrigger
from django.conf import settings
from django.db import transaction

from coupons import clock
from coupons.models import IdempotencyRecord, InboxMessage, OrderFact, OutboxEvent, PruneRun

# The only writer allowed past these tables' no-DELETE triggers; see their models' Meta.
DELETE_GUARDS = ("coupons.OutboxEvent:delete_refused", "coupons.InboxMessage:delete_refused")


def retention_prune() -> PruneRun:
    windows = settings.COUPONS
    now = clock.now()
    run = PruneRun(
        ran_at=now,
        outbox_before=now - timedelta(days=windows["OUTBOX_RETENTION_DAYS"]),
        idempotency_before=now - timedelta(hours=windows["IDEMPOTENCY_RETENTION_HOURS"]),
        inbox_before=now - timedelta(days=windows["INBOX_RETENTION_DAYS"]),
    )
    # ignore() outside atomic(): its exit runs a query, which must not meet a failed transaction.
    with pgtrigger.ignore(*DELETE_GUARDS), transaction.atomic(durable=True):
        run.outbox_deleted, _ = OutboxEvent.objects.filter(
            published_at__isnull=False, published_at__lt=run.outbox_before
        ).delete()
        run.idempotency_deleted, _ = IdempotencyRecord.objects.filter(
            status=IdempotencyRecord.Status.COMPLETED, completed_at__lt=run.idempotency_before
        ).delete()
        run.inbox_deleted, _ = InboxMessage.objects.filter(
            received_at__lt=run.inbox_before
        ).exclude(pk__in=OrderFact.objects.values("first_message_id")).delete()
        run.save()
    return run

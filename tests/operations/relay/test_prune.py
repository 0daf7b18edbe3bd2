"""`manage.py prune`: what is past its window goes, what is live or still named stays."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from coupons.events.inbox import inbox_receive
from coupons.evidence.replay import coupon_check
from coupons.models import IdempotencyRecord, InboxMessage, OrderFact, OutboxEvent, PruneRun
from coupons.models.append_only import PRUNER_ROLE
from tests.app_role import as_owner
from tests.operations.relay.history import many_events

pytestmark = pytest.mark.django_db


def publish(ids, clock):
    OutboxEvent.objects.filter(pk__in=ids).update(published_at=clock.now())


def receive(message_id, clock):
    return inbox_receive(
        message_id=message_id, fact_type="OrderClosed", order_id="order-Z",
        occurred_at=clock.now(), payload={"order_id": "order-Z"}, sender="test",
        sender_scope="test",
    )


def idempotency(key, status, clock, completed=True):
    return IdempotencyRecord.objects.create(
        scope="client:1", key=key, request_hash="h", status=status, claimed_at=clock.now(),
        completed_at=clock.now() if completed else None,
    )


def prune() -> str:
    out = StringIO()
    call_command("prune", stdout=out)
    return out.getvalue()


def test_prune_removes_only_rows_past_their_window(template, ctx, clock):
    many_events(template, ctx, coupons=2)
    old_published, old_unpublished = OutboxEvent.objects.order_by("id")[:2]
    publish([old_published.pk], clock)
    stale_done = idempotency("done-old", "COMPLETED", clock)
    stale_in_flight = idempotency("in-flight", "IN_PROGRESS", clock, completed=False)
    first = receive("m-1", clock).message
    repeat = receive("m-2", clock).message  # same fact, other message id: only de-dup evidence

    clock.advance(days=8)
    recent_published = OutboxEvent.objects.order_by("id")[2]
    publish([recent_published.pk], clock)
    fresh_done = idempotency("done-new", "COMPLETED", clock)

    out = prune()

    assert "pruned 1 outbox rows" in out
    assert not OutboxEvent.objects.filter(pk=old_published.pk).exists()
    assert OutboxEvent.objects.filter(pk__in=[old_unpublished.pk, recent_published.pk]).count() == 2
    assert OutboxEvent.objects.count() == 5
    assert set(IdempotencyRecord.objects.values_list("pk", flat=True)) == {
        stale_in_flight.pk, fresh_done.pk}
    assert stale_done.pk not in IdempotencyRecord.objects.values_list("pk", flat=True)
    # 8 days is inside the inbox window: both messages stay.
    assert InboxMessage.objects.count() == 2

    clock.advance(days=30)
    prune()
    # The fact still names its first message; the repeat's de-dup row is gone.
    assert list(InboxMessage.objects.values_list("pk", flat=True)) == [first.pk]
    assert OrderFact.objects.get().first_message_id == first.pk
    assert repeat.pk != first.pk
    assert PruneRun.objects.count() == 2


def test_the_ledger_check_accepts_a_pruned_event_but_not_a_missing_one(template, ctx, clock):
    """The check guarding invariant 5 still fires for an event missing inside the window."""
    many_events(template, ctx, coupons=1)
    publish(OutboxEvent.objects.values_list("pk", flat=True), clock)
    coupon = OutboxEvent.objects.first().coupon
    clock.advance(days=8)
    prune()
    assert OutboxEvent.objects.count() == 0
    assert coupon_check(coupon).ok

    with as_owner():  # no prune on record (PruneRun rows are never deleted by the app)
        PruneRun.objects.all().delete()  # the same gap is then a violation
    # The full check re-reads every row's event; the quick one verified these already.
    assert not coupon_check(coupon, full=True).ok
    PruneRun.objects.create(  # put the record back, for the autouse ledger check
        ran_at=clock.now(), outbox_before=clock.now(), idempotency_before=clock.now(),
        inbox_before=clock.now(), outbox_deleted=3, idempotency_deleted=0, inbox_deleted=0,
    )


@pytest.mark.owner_role
def test_no_one_deletes_an_unpublished_event_not_even_past_the_guard(template, ctx, clock):
    many_events(template, ctx, coupons=1)
    event = OutboxEvent.objects.first()
    # As the prune functions' owner, the one role `delete_refused` lets through.
    with (pytest.raises(DatabaseError, match="Cannot delete"), transaction.atomic(),
          connection.cursor() as cursor):
        cursor.execute(f"SET LOCAL ROLE {PRUNER_ROLE}")
        cursor.execute("DELETE FROM coupons_outboxevent WHERE id = %s", [event.pk])
    publish([event.pk], clock)
    with pytest.raises(DatabaseError, match="Cannot delete"), transaction.atomic():
        OutboxEvent.objects.filter(pk=event.pk).delete()  # published, but not through prune
    assert OutboxEvent.objects.filter(pk=event.pk).exists()

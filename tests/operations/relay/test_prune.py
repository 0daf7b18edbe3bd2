"""`manage.py prune`: what is past its window goes, what is live or still named stays."""

import json
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.db.models.functions import Now

from coupons.events.inbox import inbox_receive
from coupons.evidence.replay import coupon_check
from coupons.models import (
    IdempotencyRecord,
    InboxMessage,
    JournalEntry,
    JournalLeaf,
    OrderFact,
    OutboxEvent,
    PruneRun,
)
from coupons.models.append_only import PRUNER_ROLE
from coupons.services import coupon_issue, coupon_redeem
from operations.retention import retention_prune
from refunds.services.refund_receive import refund_receive
from tests.app_role import past_the_triggers
from tests.conftest import lock
from tests.coupons.safety.test_evidence_journal import verify_journal
from tests.db_clock import aged, db_now
from tests.operations.relay.history import many_events

pytestmark = pytest.mark.django_db

HOLDS = ("Every journal entry holds and every journaled row is its fold.\n", "")


def publish(ids):
    """As the relay does; the database stamps the time on its own clock."""
    OutboxEvent.objects.filter(pk__in=ids).update(published_at=Now())


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
    clock.set(db_now() - timedelta(days=20))  # the app's clock on the database's, 20 days back
    many_events(template, ctx, coupons=2)
    old_published, old_unpublished, recent_published = OutboxEvent.objects.order_by("id")[:3]
    publish([old_published.pk, recent_published.pk])
    aged(OutboxEvent, [old_published.pk], "published_at", days=8)
    stale_done = idempotency("done-old", "COMPLETED", clock)
    stale_in_flight = idempotency("in-flight", "IN_PROGRESS", clock, completed=False)
    first = receive("m-1", clock).message
    repeat = receive("m-2", clock).message  # same fact, other message id: only de-dup evidence
    clock.set(db_now())
    fresh_done = idempotency("done-new", "COMPLETED", clock)

    out = prune()

    assert "pruned 1 outbox rows" in out
    assert not OutboxEvent.objects.filter(pk=old_published.pk).exists()
    assert OutboxEvent.objects.filter(pk__in=[old_unpublished.pk, recent_published.pk]).count() == 2
    assert OutboxEvent.objects.count() == 5
    assert set(IdempotencyRecord.objects.values_list("pk", flat=True)) == {
        stale_in_flight.pk, fresh_done.pk}
    assert stale_done.pk not in IdempotencyRecord.objects.values_list("pk", flat=True)
    # 20 days is inside the inbox window: both messages stay.
    assert InboxMessage.objects.count() == 2

    aged(InboxMessage, [first.pk, repeat.pk], "received_at", days=31)
    prune()
    # The fact still names its first message; the repeat's de-dup row is gone.
    assert list(InboxMessage.objects.values_list("pk", flat=True)) == [first.pk]
    assert OrderFact.objects.get().first_message_id == first.pk
    assert repeat.pk != first.pk
    assert PruneRun.objects.count() == 2


def test_the_ledger_check_accepts_a_pruned_event_but_not_a_missing_one(template, ctx, clock):
    """The check guarding invariant 5 still fires for an event missing inside the window."""
    clock.set(db_now() - timedelta(days=20))
    many_events(template, ctx, coupons=1)
    events = OutboxEvent.objects.values_list("pk", flat=True)
    publish(events)
    aged(OutboxEvent, events, "published_at", days=8)
    coupon = OutboxEvent.objects.first().coupon
    prune()
    assert OutboxEvent.objects.count() == 0
    assert coupon_check(coupon).ok

    with past_the_triggers():  # no prune on record (no one else deletes a PruneRun)
        PruneRun.objects.all().delete()  # the same gap is then a violation
    # The full check re-reads every row's event; the quick one verified these already.
    assert not coupon_check(coupon, full=True).ok
    prune()  # a prune on record again, for the autouse ledger check


def test_prune_leaves_every_journal_entry_and_leaf(template, ctx, clock):
    """The journal is evidence, not an operational copy: retention never touches it."""
    clock.set(db_now() - timedelta(days=40))
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    _, proof = lock(coupon, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P-1", ctx=ctx)
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P-1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    call_command("sequence_journal", stdout=StringIO())
    entries = list(JournalEntry.objects.order_by("id").values())
    leaves = list(JournalLeaf.objects.order_by("index").values())
    assert entries and len(leaves) == len(entries)
    events = OutboxEvent.objects.values_list("pk", flat=True)
    publish(events)
    aged(OutboxEvent, events, "published_at", days=40)

    run = retention_prune()

    assert run.outbox_deleted == len(events) > 0
    after = list(JournalEntry.objects.order_by("id").values())
    assert after[:len(entries)] == entries  # and the run's own entry after them
    assert [(entry["subject"], entry["subject_id"]) for entry in after[len(entries):]] == [
        ("coupons.prunerun", run.pk)]
    assert list(JournalLeaf.objects.order_by("index").values()) == leaves


def test_a_prune_run_is_the_journal_entry_prune_writes_with_it(template, ctx, clock):
    """The function builds the entry's canonical content itself: the row folds from it."""
    clock.set(db_now() - timedelta(days=20))
    many_events(template, ctx, coupons=1)
    events = OutboxEvent.objects.values_list("pk", flat=True)
    publish(events)
    aged(OutboxEvent, events, "published_at", days=8)

    run = retention_prune()

    [entry] = JournalEntry.objects.filter(subject="coupons.prunerun", subject_id=run.pk)
    assert (entry.kind, entry.actor, entry.parent_hash) == ("recorded", "system:prune", None)
    assert json.loads(entry.content)["row"]["outbox_deleted"] == run.outbox_deleted > 0
    assert verify_journal() == HOLDS


@pytest.mark.owner_role
def test_no_one_deletes_an_unpublished_event_not_even_past_the_guard(template, ctx, clock):
    many_events(template, ctx, coupons=1)
    event = OutboxEvent.objects.first()
    # As the prune functions' owner, the one role `delete_refused` lets through.
    with (pytest.raises(DatabaseError, match="Cannot delete"), transaction.atomic(),
          connection.cursor() as cursor):
        cursor.execute(f"SET LOCAL ROLE {PRUNER_ROLE}")
        cursor.execute("DELETE FROM coupons_outboxevent WHERE id = %s", [event.pk])
    publish([event.pk])
    with pytest.raises(DatabaseError, match="Cannot delete"), transaction.atomic():
        OutboxEvent.objects.filter(pk=event.pk).delete()  # published, but not through prune
    assert OutboxEvent.objects.filter(pk=event.pk).exists()

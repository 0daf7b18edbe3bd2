"""Retention by partition: on PostgreSQL the outbox is partitioned by day, and
prune drops a whole past day only when every event in it was published before the window."""

from datetime import UTC, datetime, time, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from coupons.models import OutboxEvent
from operations.outbox_partitions import outbox_partition_create, partition_name
from operations.retention import retention_prune
from tests.app_role import as_owner, past_the_triggers
from tests.db_clock import db_now

pytestmark = pytest.mark.django_db


def day_partition(clock, days_ago: int) -> tuple[str, datetime]:
    """The outbox partition of the UTC day `days_ago` days before the clock's, made as the
    owner does; its name and that day's noon."""
    day = (clock.now() - timedelta(days=days_ago)).date()
    with as_owner(), connection.cursor() as cursor:
        assert outbox_partition_create(cursor, day)
    return partition_name(day), datetime.combine(day, time(12), tzinfo=UTC)


def event(created_at, published_at) -> OutboxEvent:
    """An event written at `created_at` and published at `published_at`: that time is written
    past the triggers, since the database stamps a publish with its own clock."""
    row = OutboxEvent.objects.create(event_type="LedgerCheckpointed", payload={},
                                     created_at=created_at)
    if published_at is not None:
        with past_the_triggers():
            OutboxEvent.objects.filter(pk=row.pk).update(published_at=published_at)
    return row


def exists(table: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [table])
        return cursor.fetchone()[0]


def refused(statement: str) -> str:
    with pytest.raises(DatabaseError) as error, transaction.atomic(), connection.cursor() as c:
        c.execute(statement)
    return str(error.value)


def test_prune_drops_a_past_day_whole_and_keeps_a_day_with_an_event_still_to_publish(clock):
    now = db_now()  # prune's clock
    clock.set(now)
    published_day, noon = day_partition(clock, 20)
    for minute in range(3):
        event(noon + timedelta(minutes=minute), noon + timedelta(minutes=minute + 1))
    waiting_day, noon = day_partition(clock, 19)
    waiting = event(noon, None)
    beside = [event(noon, noon + timedelta(minutes=1)) for _ in range(2)]
    late_day, noon = day_partition(clock, 18)
    published_late = event(noon, now - timedelta(days=1))  # relay was down: inside the window
    recent = event(now - timedelta(hours=1), now - timedelta(hours=1))
    # The events were committed days before a real prune; here they share its transaction, and
    # a table with deferred foreign-key checks still pending cannot be dropped.
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    run = retention_prune()

    assert (exists(published_day), exists(waiting_day), exists(late_day)) == (False, True, True)
    # The kept day's published events go row by row, as they would without partitions.
    assert set(OutboxEvent.objects.values_list("pk", flat=True)) == {
        waiting.pk, published_late.pk, recent.pk}
    assert not OutboxEvent.objects.filter(pk__in=[e.pk for e in beside]).exists()
    assert run.outbox_deleted == 3 + 2


def test_the_app_role_can_neither_drop_nor_empty_an_outbox_partition(clock):
    name, noon = day_partition(clock, 20)
    kept = event(noon, noon + timedelta(minutes=1))

    assert "must be owner" in refused(f"DROP TABLE {name}")
    assert "must be owner" in refused(
        f"ALTER TABLE coupons_outboxevent DETACH PARTITION {name}")
    assert "permission denied" in refused(f"DELETE FROM {name}")
    assert "permission denied" in refused(f"TRUNCATE {name}")
    assert exists(name) and OutboxEvent.objects.filter(pk=kept.pk).exists()


def test_outbox_partitions_makes_the_days_ahead_only_with_the_owners_login(clock):
    with connection.cursor() as cursor:
        cursor.execute("SELECT (now() AT TIME ZONE 'UTC')::date + 9")
        ahead = partition_name(cursor.fetchone()[0])
    assert not exists(ahead)
    as_app, as_the_owner = StringIO(), StringIO()

    call_command("outbox_partitions", "--days", "9", stdout=as_app)
    with as_owner():
        call_command("outbox_partitions", "--days", "9", stdout=as_the_owner)

    assert as_app.getvalue().strip() == "outbox partitions in place: none"
    assert ahead in as_the_owner.getvalue() and exists(ahead)

"""Several relays at once on PostgreSQL: rows claimed with SKIP LOCKED, per-coupon order kept."""

import threading
from collections import Counter

import pytest
from django.db import connection, transaction

from coupons.models import OutboxEvent
from tests.concurrency.threads import race
from tests.relay.history import many_events

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL SKIP LOCKED"),
    pytest.mark.django_db(transaction=True),
]


def drain(relay) -> int:
    total = 0
    while (result := relay.run_batch()).published or result.held:
        assert result.error is None
        total += result.published
    return total


def test_two_relays_never_publish_a_row_twice(template, ctx, broker_queue, make_relay):
    many_events(template, ctx, coupons=40)
    first, second = make_relay(batch_size=7), make_relay(batch_size=7)

    outcomes = race(lambda: drain(first), lambda: drain(second))

    assert sum(value for _, value in outcomes) == 120
    assert not OutboxEvent.objects.filter(published_at__isnull=True).exists()
    messages = broker_queue.drain()
    assert len(messages) == 120
    assert Counter(m["message_id"] for m in messages).most_common(1)[0][1] == 1
    by_coupon = {}
    for message in messages:
        by_coupon.setdefault(message["headers"]["coupon_id"], []).append(
            message["headers"]["state_version"])
    assert all(versions == [1, 2, 3] for versions in by_coupon.values())


def test_a_coupon_whose_earlier_event_another_relay_holds_waits(
    template, ctx, broker_queue, make_relay
):
    many_events(template, ctx, coupons=2)
    events = list(OutboxEvent.objects.order_by("id"))
    first_coupon = events[0].coupon_id
    locked, release = threading.Event(), threading.Event()

    def other_relay_holds_first_event():
        try:
            with transaction.atomic():
                OutboxEvent.objects.select_for_update().get(pk=events[0].pk)
                locked.set()
                release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=other_relay_holds_first_event)
    holder.start()
    assert locked.wait(30)
    relay = make_relay()
    try:
        result = relay.run_batch()
    finally:
        release.set()
        holder.join(30)
    assert (result.published, result.held) == (3, 2)
    assert [m["headers"]["coupon_id"] for m in broker_queue.drain()] == [
        e.coupon_id for e in events if e.coupon_id != first_coupon]

    assert relay.run_batch().published == 3
    assert [m["headers"]["state_version"] for m in broker_queue.drain()] == [1, 2, 3]

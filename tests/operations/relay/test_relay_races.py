"""Several relays at once on PostgreSQL: rows claimed with SKIP LOCKED, per-coupon order kept."""

import threading
from collections import Counter

import pytest
from django.db import connection, transaction

from coupons.models import OutboxEvent
from tests.coupons.concurrency.threads import race
from tests.operations.relay.history import many_events

pytestmark = pytest.mark.django_db(transaction=True)


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
    out_of_order = {coupon: v for coupon, v in by_coupon.items() if v != [1, 2, 3]}
    assert not out_of_order


def hold_row_lock(pk: int):
    """Another relay's open batch: the outbox row `pk` stays locked until `release` is set."""
    locked, release = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                OutboxEvent.objects.select_for_update().get(pk=pk)
                locked.set()
                release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert locked.wait(30)
    return release, holder


def test_a_coupon_whose_earliest_event_another_relay_holds_is_skipped_whole(
    template, ctx, broker_queue, make_relay
):
    many_events(template, ctx, coupons=2)
    events = list(OutboxEvent.objects.order_by("id"))
    first_coupon = events[0].coupon_id
    release, holder = hold_row_lock(events[0].pk)
    relay = make_relay()
    try:
        result = relay.run_batch()
    finally:
        release.set()
        holder.join(30)
    assert (result.published, result.held) == (3, 0)
    assert [m["headers"]["coupon_id"] for m in broker_queue.drain()] == [
        e.coupon_id for e in events if e.coupon_id != first_coupon]

    assert relay.run_batch().published == 3
    assert [m["headers"]["state_version"] for m in broker_queue.drain()] == [1, 2, 3]


def test_a_gap_in_the_middle_holds_the_rest_of_the_coupon(
    template, ctx, broker_queue, make_relay
):
    """Another relay holds version 2 without version 1 (a relay from before whole-coupon
    claims, during a rolling deploy): this batch gets versions 1 and 3 and sends only 1."""
    many_events(template, ctx, coupons=1)
    first, second, third = OutboxEvent.objects.order_by("id")
    release, holder = hold_row_lock(second.pk)
    relay = make_relay()
    try:
        result = relay.run_batch()
    finally:
        release.set()
        holder.join(30)
    assert (result.published, result.held) == (1, 1)
    assert [m["headers"]["state_version"] for m in broker_queue.drain()] == [1]
    assert not OutboxEvent.objects.get(pk=third.pk).published_at

    assert relay.run_batch().published == 2
    assert [m["headers"]["state_version"] for m in broker_queue.drain()] == [2, 3]

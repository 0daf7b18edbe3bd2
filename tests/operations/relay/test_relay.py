"""The outbox relay against the real RabbitMQ: what arrives, in which order, and what survives
a refused, closed or unconfirmed publish and a relay killed before it recorded its work."""

from collections import defaultdict

import pika.exceptions
import pytest

from coupons.models import OutboxEvent
from tests.db_clock import db_now
from tests.operations.relay.history import every_command, many_events

pytestmark = pytest.mark.django_db


def unpublished() -> list[int]:
    return list(OutboxEvent.objects.filter(published_at__isnull=True).values_list("id", flat=True))


def as_stored(event: OutboxEvent) -> dict:
    return {
        "routing_key": event.event_type, "message_id": str(event.pk), "delivery_mode": 2,
        "headers": {"event_id": event.pk, "event_type": event.event_type,
                    "coupon_id": event.coupon_id,
                    "state_version": event.payload["state_version"]},
        # The stored payload, with the event's own id and type in the body too.
        "body": {"event_id": event.pk, "event_type": event.event_type, **event.payload},
    }


def versions_by_coupon(messages) -> dict[int, list[int]]:
    seen = defaultdict(list)
    for message in messages:
        seen[message["headers"]["coupon_id"]].append(message["headers"]["state_version"])
    return dict(seen)


def test_every_command_arrives_as_stored_in_version_order(
    template, ctx, clock, broker_queue, make_relay
):
    coupons = every_command(template, ctx, clock)
    result = make_relay().run_batch()

    events = list(OutboxEvent.objects.order_by("id"))
    assert {e.event_type for e in events} >= {
        "CouponIssued", "CouponLocked", "CouponLeaseRenewed", "CouponReleased", "CouponRedeemed",
        "CouponVoided", "CouponExpired",
    }
    assert result.published == len(events) and result.error is None
    messages = broker_queue.drain()
    assert messages == [as_stored(e) for e in events]
    assert versions_by_coupon(messages) == {
        coupons[0].pk: list(range(1, 8)), coupons[1].pk: [1, 2],
    }
    assert unpublished() == []
    # On the database's clock (retention measures from it), not the app's frozen one.
    assert all(e.published_at >= db_now() for e in OutboxEvent.objects.all())


def test_a_second_run_publishes_nothing_again(template, ctx, broker_queue, make_relay):
    many_events(template, ctx, coupons=2)
    relay = make_relay()
    assert relay.run_batch().published == 6
    assert relay.run_batch().published == 0
    assert len(broker_queue.drain()) == 6


def test_batches_follow_id_order(template, ctx, broker_queue, make_relay):
    many_events(template, ctx, coupons=4)
    relay = make_relay(batch_size=5)
    while relay.run_batch().published:
        pass
    ids = [int(m["message_id"]) for m in broker_queue.drain()]
    assert ids == sorted(ids) and len(ids) == 12


def test_broker_refused_keeps_rows_until_it_answers(template, ctx, broker_queue, make_relay):
    many_events(template, ctx, coupons=2)
    down = make_relay(url="amqp://guest:guest@127.0.0.1:1/%2F")  # nothing listens on port 1
    result = down.run_batch()
    assert isinstance(result.error, pika.exceptions.AMQPConnectionError)
    assert result.published == 0 and len(unpublished()) == 6
    assert broker_queue.drain(timeout=0.3) == []

    assert make_relay().run_batch().published == 6
    assert unpublished() == [] and len(broker_queue.drain()) == 6


def test_connection_closed_mid_batch(template, ctx, broker_queue, make_relay):
    many_events(template, ctx, coupons=2)
    first_id = min(unpublished())

    def close_after_first(relay, event):
        if event.pk == first_id:
            relay.connection.close()

    relay = make_relay(on_published=close_after_first)
    result = relay.run_batch()
    assert result.published == 1 and result.error is not None
    assert len(unpublished()) == 5 and first_id not in unpublished()

    assert relay.run_batch().published == 5  # reconnects
    ids = [int(m["message_id"]) for m in broker_queue.drain()]
    assert sorted(ids) == ids and len(ids) == 6


def test_missing_confirm_blocks_only_that_coupons_later_events(
    template, ctx, broker_queue, make_relay
):
    many_events(template, ctx, coupons=2)
    events = list(OutboxEvent.objects.order_by("id"))
    unlucky = events[1]  # the first coupon's LOCK (version 2)
    relay = make_relay()
    send = relay.publish

    def send_then_lose_confirm(event):
        send(event)
        if event.pk == unlucky.pk:
            raise pika.exceptions.NackError([])  # sent, but the broker never said yes

    relay.publish = send_then_lose_confirm
    result = relay.run_batch()
    blocked = [e.pk for e in events if e.coupon_id == unlucky.coupon_id and e.pk >= unlucky.pk]
    assert result.failed == 1 and result.published == 4
    assert unpublished() == blocked

    relay.publish = send
    assert relay.run_batch().published == 2
    messages = broker_queue.drain()
    # The lost-confirm message arrived and is sent again: a duplicate with the same event id.
    assert [int(m["message_id"]) for m in messages].count(unlucky.pk) == 2
    latest = {}
    for message in messages:  # per coupon, the last copy of each version comes in order
        latest.setdefault(message["headers"]["coupon_id"], []).append(
            message["headers"]["state_version"])
    assert latest[unlucky.coupon_id] == [1, 2, 2, 3]


def test_relay_killed_before_recording_republishes_with_the_same_event_id(
    template, ctx, broker_queue, make_relay
):
    many_events(template, ctx, coupons=1)
    events = list(OutboxEvent.objects.order_by("id"))

    class Killed(BaseException):
        """Stands for SIGKILL: nothing after the publish runs, the transaction is lost."""

    def die(relay, event):
        if event.pk == events[-1].pk:
            raise Killed

    with pytest.raises(Killed):
        make_relay(on_published=die).run_batch()
    assert unpublished() == [e.pk for e in events]  # nothing recorded: the batch rolled back

    assert make_relay().run_batch().published == 3
    ids = [int(m["message_id"]) for m in broker_queue.drain()]
    assert ids == [e.pk for e in events] * 2  # each one twice, none lost


def test_shards_split_coupons(template, ctx, broker_queue, make_relay):
    many_events(template, ctx, coupons=4)
    even = make_relay(shard=0, shards=2).run_batch()
    assert {OutboxEvent.objects.get(pk=i).coupon_id % 2 for i in unpublished()} == {1}
    odd = make_relay(shard=1, shards=2).run_batch()
    assert even.published + odd.published == 12 and unpublished() == []

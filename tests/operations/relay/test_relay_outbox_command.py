"""`manage.py relay_outbox`: --once for cron, the long-running loop, and the broker down."""

import threading
import time

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from coupons.models import OutboxEvent
from coupons.services import coupon_issue
from operations.relay import run_forever
from tests.operations.relay.history import many_events


@pytest.mark.django_db
def test_once_drains_the_outbox_in_batches(template, ctx, broker_queue, capsys):
    many_events(template, ctx, coupons=3)
    call_command("relay_outbox", "--once", "--batch-size", "4", "--exchange", broker_queue.exchange)
    assert "published 9; lag: 0 unpublished" in capsys.readouterr().out
    assert len(broker_queue.drain()) == 9


@pytest.mark.django_db
def test_once_with_the_broker_down_fails_and_reports_the_lag(
    template, ctx, broker_queue, settings
):
    many_events(template, ctx, coupons=1)
    settings.BROKER_URL = "amqp://guest:guest@127.0.0.1:1/%2F"
    with pytest.raises(CommandError, match="published 0; broker error.*lag: 3 unpublished"):
        call_command("relay_outbox", "--once", "--exchange", broker_queue.exchange)
    assert OutboxEvent.objects.filter(published_at__isnull=True).count() == 3


def test_shard_outside_shards_is_refused():
    with pytest.raises(CommandError, match="0 <= K < N"):
        call_command("relay_outbox", "--once", "--shard", "2", "--shards", "2")


@pytest.mark.django_db(transaction=True)
def test_the_loop_backs_off_while_the_broker_is_down_then_catches_up(
    template, ctx, broker_queue, make_relay
):
    many_events(template, ctx, coupons=1)
    relay = make_relay(url="amqp://guest:guest@127.0.0.1:1/%2F")
    reports, stop = [], threading.Event()

    def report(line):
        reports.append(line)
        if len(reports) == 2:  # the broker comes back
            relay.url = make_relay().url

    loop = threading.Thread(target=lambda: (run_forever(relay, stop=stop, report=report),
                                            connection.close()))
    loop.start()
    try:
        messages = broker_queue.drain(timeout=5)
    finally:
        stop.set()
        loop.join(10)
    assert "lag: 3 unpublished" in reports[0] and "retrying in 0.5s" in reports[0]
    assert "retrying in 1.0s" in reports[1]
    assert [m["headers"]["state_version"] for m in messages] == [1, 2, 3]


@pytest.mark.django_db(transaction=True)
def test_a_commit_wakes_the_relay_well_under_a_second(template, ctx, broker_queue, make_relay):
    relay, stop = make_relay(), threading.Event()
    loop = threading.Thread(target=lambda: (run_forever(relay, stop=stop), connection.close()))
    loop.start()
    try:
        # Real time: the loop is past its first batch, waiting on LISTEN (fallback poll 1 s).
        time.sleep(0.2)
        committed = time.monotonic()
        coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx)
        messages = broker_queue.drain(timeout=2, limit=1)
        arrived = time.monotonic()
    finally:
        stop.set()
        loop.join(10)
    assert [m["routing_key"] for m in messages] == ["CouponIssued"]
    assert arrived - committed < 0.5  # without NOTIFY: the fallback poll, about 0.8 s

"""A relay frozen mid-batch (stopped, or its host gone) holds back only its own coupons, and only
until the database ends its idle transaction; the other relays keep publishing."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.db import connection

from coupons.models import OutboxEvent
from coupons.services import coupon_issue, coupon_release
from tests.app_role import as_owner
from tests.conftest import lock
from tests.faults import TcpProxy
from tests.operations.relay.history import many_events

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[3]
APP_NAME = f"frozen-relay-test-{os.getpid()}"


def drain(relay, rounds=50) -> int:
    """Batches until one finds nothing left to send (a bounded number: a relay whose batches
    are all held behind another relay's rows would spin)."""
    total = 0
    for _ in range(rounds):
        result = relay.run_batch()
        assert result.error is None
        total += result.published
        if not result.published and not result.held:
            break
    return total


def lock_and_release(coupon, ctx, times):
    """Two events per round on one coupon: LOCK, RELEASE."""
    for n in range(times):
        _, proof = lock(coupon, ctx, order_id=f"order-{coupon.pk}-{n}")
        coupon_release(coupon_id=coupon.pk, lease=proof, reason="cart emptied", ctx=ctx)


def frozen_after_first_publish(make_relay):
    """A relay in its own thread that publishes one event of its batch, then stops (its
    transaction and row locks held) until the returned event is set."""
    frozen, thaw = threading.Event(), threading.Event()

    def freeze(relay, event):
        frozen.set()
        assert thaw.wait(60)

    relay = make_relay(batch_size=3, on_published=freeze)

    def run():
        try:
            relay.run_batch()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    assert frozen.wait(30)
    return thaw, thread


def test_a_frozen_relay_holds_back_only_its_own_coupons(
    template, ctx, broker_queue, make_relay
):
    held = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    lock_and_release(held, ctx, times=1)
    thaw, frozen = frozen_after_first_publish(make_relay)
    try:
        # The frozen relay's coupon goes on: its later events come before everyone else's and
        # are more than a batch of the other relay.
        lock_and_release(held, ctx, times=3)
        many_events(template, ctx, coupons=4)
        others = OutboxEvent.objects.exclude(coupon_id=held.pk)
        second = make_relay(batch_size=2)

        published = drain(second)
        backlog = OutboxEvent.objects.filter(published_at__isnull=True).count()
    finally:
        thaw.set()
        frozen.join(30)

    assert published == others.count() == 12
    assert not others.filter(published_at__isnull=True).exists()
    assert backlog == 3 + 6  # the frozen relay's coupon only
    # Thawed, it sent the rest of its batch (versions 1-3) and committed; the rest of its coupon
    # follows, in order.
    sent = [(m["headers"]["coupon_id"], m["headers"]["state_version"])
            for m in broker_queue.drain()]
    assert [version for coupon, version in sent if coupon == held.pk] == [1, 2, 3]
    assert drain(second) == 6
    assert [m["headers"]["state_version"] for m in broker_queue.drain()] == list(range(4, 10))


def sessions_holding_rows_idle() -> int:
    """The relay process's sessions idle in a transaction that holds row locks (the owner sees
    every session)."""
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
                       " AND state = 'idle in transaction' AND backend_xid IS NOT NULL",
                       [APP_NAME])
        return cursor.fetchone()[0]


def relay_sessions(query_like) -> int:
    """The relay process's sessions whose last statement is like `query_like`."""
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
                       " AND query LIKE %s", [APP_NAME, query_like])
        return cursor.fetchone()[0]


@pytest.fixture
def relay_process(broker_queue):
    """`manage.py relay_outbox` in its own process, its broker through a proxy that can go
    silent, its sessions limited to two seconds idle in a transaction."""
    proxy = TcpProxy("127.0.0.1", 5672)
    started = []

    def start():
        database = connection.settings_dict
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings",
               "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:"
                               f"{database['PORT']}/{database['NAME']}",
               "BROKER_URL": proxy.url(), "BROKER_CONFIRM_TIMEOUT_SECONDS": "120",
               "WORKER_IDLE_IN_TRANSACTION_SECONDS": "2", "PGAPPNAME": APP_NAME}
        env.pop("TEST_DATABASE_NAME", None)
        process = subprocess.Popen(
            [sys.executable, "manage.py", "relay_outbox", "--exchange", broker_queue.exchange],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        return process

    yield proxy, start
    for process in started:
        process.send_signal(signal.SIGCONT)
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
    proxy.close()


def wait_for(condition, seconds=60, step=0.05):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(step)


def test_a_stopped_relay_process_frees_its_coupons_when_its_idle_transaction_is_ended(
    template, ctx, broker_queue, make_relay, relay_process
):
    proxy, start = relay_process
    frozen = start()
    # Listening, and its first (empty) batch committed, which it does once connected to the
    # broker.
    wait_for(lambda: relay_sessions("LISTEN %") == 1 and relay_sessions("COMMIT") >= 1)
    assert frozen.poll() is None
    proxy.blackhole()  # its publish now waits for a confirm that never comes
    many_events(template, ctx, coupons=3)
    wait_for(lambda: sessions_holding_rows_idle() == 1)
    os.kill(frozen.pid, signal.SIGSTOP)  # frozen mid-batch, its rows claimed
    stopped_at = time.monotonic()
    second = make_relay(batch_size=5)

    # Until the server ends the stopped relay's transaction, its coupons are skipped whole.
    wait_for(lambda: drain(second) is not None
             and not OutboxEvent.objects.filter(published_at__isnull=True).exists(), 30, 0.2)

    assert time.monotonic() - stopped_at >= 1.5  # not before the limit
    assert sessions_holding_rows_idle() == 0
    by_coupon = {}
    for message in broker_queue.drain():
        by_coupon.setdefault(message["headers"]["coupon_id"], []).append(
            message["headers"]["state_version"])
    assert sorted(by_coupon.values()) == [[1, 2, 3]] * 3

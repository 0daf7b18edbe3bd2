"""A RabbitMQ node dies under the relay and the fact consumer: nothing is lost, nothing reordered.

bin/broker-cluster up starts three nodes (AMQP 5681-5683) as one cluster. `manage.py
relay_outbox` and `manage.py consume_facts` run as their own processes with BROKER_URL listing
the three nodes; the facts queue, its dead letters and the queue the test reads the relay's
events from are quorum queues, declared through node 1, so node 1 holds both processes'
connections and every queue's leader. An order service publishes a DepositPaid and an
OrderClosed per presale order (the consumer locks, then releases a coupon: the relay publishes
CouponLocked and CouponReleased); midway node 1 is killed (SIGKILL). The processes reconnect to
node 2; the queues elect leaders on the other two nodes. The cluster is stopped and deleted
whatever happens.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pika
import pika.exceptions
import pytest
from django.db import connection

from coupons import clock
from coupons.models import CouponOperation, InboxMessage, OutboxEvent
from coupons.services import CommandContext, coupon_issue, service_client_create
from operations import broker
from tests.coupons.events.test_presale import presale_template
from tests.deploy.ha.conftest import require

ROOT = Path(__file__).resolve().parents[3]
BROKER_CLUSTER = str(ROOT / "bin" / "broker-cluster")
ORDERS = 40
PAIRS_BEFORE_CRASH = 15  # the consumer has taken this many orders' facts when node 1 dies
PUBLISH_PAUSE_SECONDS = 0.05  # between two orders: the node dies while facts still arrive
CONNECTIONS_SETTLE_SECONDS = 60

pytestmark = [pytest.mark.ha, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def broker_cluster():
    require("rabbitmq-server", "rabbitmq-server")
    env = {**os.environ, "BROKER_CLUSTER_DIR": f"/tmp/coupon-broker-{uuid.uuid4().hex[:8]}"}
    try:
        started = time.monotonic()
        up = subprocess.run([BROKER_CLUSTER, "up"], env=env, check=True, capture_output=True,
                            text=True, timeout=180)
        print(f"\nbroker cluster up in {time.monotonic() - started:.1f}s "
              f"(load average {os.getloadavg()[0]:.1f})")
        yield env, up.stdout.strip().splitlines()[-1]
    except subprocess.CalledProcessError as error:
        pytest.fail(f"bin/broker-cluster up failed:\n{error.stdout}\n{error.stderr}")
    finally:
        subprocess.run([BROKER_CLUSTER, "down"], env=env, timeout=120)


class OrderService:
    """Publishes facts as a sending service would: each confirmed by the cluster, and one whose
    node died before its confirm sent again through the next node (a duplicate at worst)."""

    def __init__(self, url: str, exchange: str):
        self.url, self.exchange = url, exchange
        self.connection = self.channel = None
        self.reconnects = 0

    def publish(self, body: bytes) -> None:
        deadline = time.monotonic() + CONNECTIONS_SETTLE_SECONDS
        while True:
            try:
                if self.channel is None:
                    self.connection = broker.connect(self.url)
                    self.channel = self.connection.channel()
                    self.channel.confirm_delivery()
                self.channel.basic_publish(
                    self.exchange, "fact", body,
                    properties=pika.BasicProperties(delivery_mode=2,
                                                    content_type="application/json"))
                return
            except broker.BROKER_ERRORS:
                assert time.monotonic() < deadline, "the cluster took no fact for a minute"
                self.channel = None
                self.reconnects += 1
                time.sleep(0.2)

    def close(self):
        if self.connection is not None and self.connection.is_open:
            self.connection.close()


def fact(message_id: str, fact_type: str, **payload) -> bytes:
    return json.dumps({"message_id": message_id, "type": fact_type,
                       "occurred_at": clock.now().isoformat(), "payload": payload}).encode()


def wait_for(condition, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def start(command: list[str], url: str, logs: Path, name: str) -> subprocess.Popen:
    database = connection.settings_dict
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings",
           "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:"
                           f"{database['PORT']}/{database['NAME']}",
           "BROKER_URL": url, "WORKER_RETRY_MIN_MS": "200", "WORKER_RETRY_MAX_MS": "2000",
           "LOG_FORMAT": "text"}
    env.pop("TEST_DATABASE_NAME", None)
    with open(logs / f"{name}.log", "w") as log:
        return subprocess.Popen([sys.executable, "manage.py", *command], cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def drain(url: str, queue: str) -> list[dict]:
    """Every message in the relay's test queue, read through whichever node answers."""
    reader = broker.connect(url)
    channel = reader.channel()
    messages = []
    for method, properties, _body in channel.consume(queue, inactivity_timeout=2):
        if method is None:
            break
        messages.append(properties.headers)
        channel.basic_ack(method.delivery_tag)
    channel.cancel()
    reader.close()
    return messages


def first_of_each(messages: list[dict]) -> list[dict]:
    """A redelivered event (same event id) counts once, where it first came."""
    seen, first = set(), []
    for headers in messages:
        if headers["event_id"] not in seen:
            seen.add(headers["event_id"])
            first.append(headers)
    return first


def test_a_node_killed_under_the_relay_and_the_consumer_loses_and_reorders_nothing(
    broker_cluster, tmp_path
):
    env, url = broker_cluster
    assert len(broker.node_urls(url)) == 3
    name = f"ha-{uuid.uuid4().hex[:8]}"
    events_exchange, facts_exchange = f"{name}-coupons", f"{name}-facts"
    facts_queue = f"{facts_exchange}.q"

    # Before anything publishes: the quorum queue that sees every event the relay sends, and
    # the facts queue bound, as the consumer declares them (so no fact is published unrouted).
    setup = broker.connect(url)
    channel = setup.channel()
    for exchange in (events_exchange, facts_exchange):
        channel.exchange_declare(exchange, exchange_type="topic", durable=True)
    for queue in (events_exchange, facts_queue):
        channel = broker.declare_quorum_queue(setup, channel, queue)
    channel.queue_bind(events_exchange, events_exchange, routing_key="#")
    channel.queue_bind(facts_queue, facts_exchange, routing_key="#")
    setup.close()

    ctx = CommandContext(actor="test")
    now = clock.now()
    template = presale_template(f"ha-{name}", "STRICT", valid_from=now - timedelta(days=1),
                                valid_until=now + timedelta(days=10))
    coupons = [coupon_issue(template_id=template.pk, user_id=f"u{n}", ctx=ctx).coupon
               for n in range(ORDERS)]
    client, _ = service_client_create(name=f"order-service-{name}",
                                      fact_types=["DepositPaid", "OrderClosed"])
    processes = {
        "relay": start(["relay_outbox", "--exchange", events_exchange], url, tmp_path, "relay"),
        "consumer": start(["consume_facts", "--client", client.name, "--exchange",
                           facts_exchange, "--queue", facts_queue], url, tmp_path, "consumer"),
    }
    order_service = OrderService(url, facts_exchange)
    crashed = threading.Event()
    try:
        for n, coupon in enumerate(coupons):
            if n == PAIRS_BEFORE_CRASH:
                # Mid-stream: the consumer has taken facts and has more to take.
                wait_for(lambda: InboxMessage.objects.count() >= PAIRS_BEFORE_CRASH,
                         "the consumer's first facts")
                subprocess.run([BROKER_CLUSTER, "crash", "1"], env=env, check=True)
                crashed.set()
            order_service.publish(fact(
                f"deposit-{name}-{n}", "DepositPaid", order_id=f"O{n}", coupon_id=coupon.pk,
                user_id=coupon.user_id, order_amount="1000.00",
                final_payment_deadline=(now + timedelta(days=14)).isoformat()))
            order_service.publish(fact(f"close-{name}-{n}", "OrderClosed", order_id=f"O{n}"))
            time.sleep(PUBLISH_PAUSE_SECONDS)

        wait_for(lambda: InboxMessage.objects.count() == 2 * ORDERS, "every fact consumed")
        wait_for(lambda: not OutboxEvent.objects.filter(published_at__isnull=True).exists(),
                 "every event published")
        alive = {name: process.poll() is None for name, process in processes.items()}
    finally:
        order_service.close()
        for process in processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(30)

    logs = {name: (tmp_path / f"{name}.log").read_text() for name in processes}
    assert crashed.is_set()
    assert alive == {"relay": True, "consumer": True}, {n: t[-2000:] for n, t in logs.items()}
    # The processes did lose node 1 (each logged it) and carried on through another.
    assert "broker" in logs["relay"] and "broker error" in logs["consumer"]
    assert order_service.reconnects >= 1

    # Facts: every one taken once, and each order's in publish order: lock, then release.
    assert InboxMessage.objects.count() == 2 * ORDERS
    ledgers = {coupon.pk: list(CouponOperation.objects.filter(coupon=coupon)
                               .order_by("to_version").values_list("op_type", flat=True))
               for coupon in coupons}
    assert [pk for pk, ops in ledgers.items() if ops != ["ISSUE", "LOCK", "RELEASE"]] == []

    # Events: every outbox row on the queue, and each coupon's in version order.
    sent = set(OutboxEvent.objects.values_list("pk", flat=True))
    received = drain(url, events_exchange)
    firsts = first_of_each(received)
    received_ids = {headers["event_id"] for headers in firsts}
    lost = sent - received_ids
    by_coupon: dict[int, list[int]] = {}
    for headers in firsts:
        by_coupon.setdefault(headers["coupon_id"], []).append(headers["state_version"])
    out_of_order = {coupon: versions for coupon, versions in by_coupon.items()
                    if versions != sorted(versions)}
    print(f"\nnode 1 killed: events sent {len(sent)}, received {len(received_ids)} "
          f"({len(received) - len(firsts)} duplicates), lost {len(lost)}, coupons out of order "
          f"{len(out_of_order)}; facts {2 * ORDERS} sent, {InboxMessage.objects.count()} taken; "
          f"publisher reconnects {order_service.reconnects}")
    assert lost == set()
    assert received_ids == sent
    assert out_of_order == {}
    assert sorted(by_coupon.values()) == [[1, 2, 3]] * ORDERS  # issued, locked, released

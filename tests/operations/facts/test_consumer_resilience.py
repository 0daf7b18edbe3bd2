"""The fact consumer survives its connections and a retry never reorders facts."""

import itertools
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from prometheus_client import REGISTRY

from coupons.models import CouponOperation, InboxMessage
from coupons.services import coupon_issue
from operations import facts_consumer
from tests.conftest import START
from tests.coupons.events.test_presale import presale_template
from tests.faults import TcpProxy, terminate_this_threads_backend
from tests.operations.facts.conftest import event_body

# A consumer thread writing while the test reads.
pytestmark = pytest.mark.django_db(transaction=True)

ORDERS = 10
DEADLINE = START + timedelta(days=14)
PUBLISH_ORDER = ["ISSUE", "LOCK", "RELEASE"]  # a deposit locks, the close releases


@pytest.fixture
def presale_coupons(clock, ctx):
    strict = presale_template("presale-strict", "STRICT")
    return [coupon_issue(template_id=strict.pk, user_id=f"u{n}", ctx=ctx).coupon
            for n in range(ORDERS)]


def publish_pairs(facts_broker, coupons, at) -> None:
    """Per order: DepositPaid, then OrderClosed."""
    for n, coupon in enumerate(coupons):
        facts_broker.publish(event_body(
            f"deposit-{n}", "DepositPaid", at, order_id=f"O{n}", coupon_id=coupon.pk,
            user_id=f"u{n}", order_amount="1000.00", final_payment_deadline=DEADLINE.isoformat()))
        facts_broker.publish(event_body(f"close-{n}", "OrderClosed", at, order_id=f"O{n}"))


def consume_until(consumer, done, seconds: float = 30) -> None:
    """The long-running consumer in a thread until `done()`, then stopped."""
    stop = threading.Event()
    loop = threading.Thread(target=lambda: (facts_consumer.run_forever(consumer, stop=stop),
                                            connection.close()))
    loop.start()
    try:
        deadline = time.monotonic() + seconds
        while not done():
            assert time.monotonic() < deadline, "the facts were not all consumed"
            time.sleep(0.1)
        assert loop.is_alive()
    finally:
        stop.set()
        loop.join(15)
    assert not loop.is_alive()


def every_fact_taken() -> bool:
    return InboxMessage.objects.count() == 2 * ORDERS


def reordered(coupons) -> list[str]:
    """Orders whose coupon's ledger is not what the facts give in publish order."""
    return [coupon.user_id for coupon in coupons
            if list(CouponOperation.objects.filter(coupon=coupon).order_by("to_version")
                    .values_list("op_type", flat=True)) != PUBLISH_ORDER]


def losses(kind: str) -> float:
    return REGISTRY.get_sample_value(
        "coupons_worker_connection_losses_total", {"process": "consumer", "connection": kind}
    ) or 0


def test_a_database_cut_mid_stream_leaves_every_order_as_publish_order_does(
    presale_coupons, clock, settings, service_client, facts_broker, make_consumer, monkeypatch,
):
    settings.WORKER_RETRY_MIN_SECONDS = 0.05
    publish_pairs(facts_broker, presale_coupons, clock.now())
    real, calls = facts_consumer.fact_receive, itertools.count(1)

    def cut_once(**kwargs):
        # The 7th fact is order O3's deposit; its close is among the prefetched ones behind it.
        if next(calls) == 7:
            terminate_this_threads_backend()
        return real(**kwargs)

    monkeypatch.setattr(facts_consumer, "fact_receive", cut_once)
    before = losses("database")

    consume_until(make_consumer(service_client[0]), every_fact_taken)

    # Once: the deposit went back behind its own close, was IGNORED, and O3's
    # coupon was never locked (1 of 10 reordered).
    assert reordered(presale_coupons) == []
    assert next(calls) > 2 * ORDERS + 1  # the cut fact was taken again
    assert losses("database") == before + 1
    assert not InboxMessage.objects.filter(outcome__action="IGNORED").exists()


def test_a_broker_connection_cut_mid_stream_is_reopened_and_every_fact_taken_in_order(
    presale_coupons, clock, settings, service_client, facts_broker, make_consumer, monkeypatch,
):
    settings.WORKER_RETRY_MIN_SECONDS = 0.05
    proxy = TcpProxy("127.0.0.1", 5672)
    publish_pairs(facts_broker, presale_coupons, clock.now())
    real, calls = facts_consumer.fact_receive, itertools.count(1)

    def cut_once(**kwargs):
        answer = real(**kwargs)
        if next(calls) == 5:
            proxy.cut()  # processed, not yet acked: it comes again and is a DUPLICATE
        return answer

    monkeypatch.setattr(facts_consumer, "fact_receive", cut_once)
    before = losses("broker")
    try:
        consume_until(make_consumer(service_client[0], url=proxy.url()), every_fact_taken)
    finally:
        proxy.close()

    assert reordered(presale_coupons) == []
    assert losses("broker") > before

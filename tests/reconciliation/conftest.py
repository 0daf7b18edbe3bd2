"""Faults for reconciliation to find, made by skipping a service on purpose: a fact stored
without its handler, a decision recorded without its command. Honest paths use the services."""

import itertools
import uuid

import pika
import pika.exceptions
import pytest
from django.conf import settings

from coupons import clock
from coupons.models import FactType, Finding, FindingStatus, InboxMessage, OrderFact
from coupons.relay import EXCHANGE
from coupons.services import CommandContext, coupon_issue
from coupons.services.reconcile import reconcile_run
from tests.conftest import lock

_messages = itertools.count(1)


def fact_without_handler(order_id: str, fact_type: str, payment_id: str = "") -> OrderFact:
    """The order service's fact as stored, but its handler (redeem, release) never ran."""
    message = InboxMessage.objects.create(
        message_id=f"skipped-{next(_messages)}", fact_type=fact_type, order_id=order_id,
        occurred_at=clock.now(), payload={"order_id": order_id, "payment_id": payment_id},
        sender="order-service", sender_scope="client:0", content_hash="0" * 64,
        received_at=clock.now(), outcome={"action": "HANDLER_SKIPPED"},
    )
    return OrderFact.objects.create(
        order_id=order_id, fact_type=fact_type, payment_id=payment_id, occurred_at=clock.now(),
        payload=message.payload, first_message=message, recorded_at=clock.now(),
    )


def closed_order_still_locked(template, ctx) -> Finding:
    """A coupon locked by an order that closed without its release: one open P2 finding."""
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    lock(coupon, ctx, order_id="closed-unreleased")
    fact_without_handler("closed-unreleased", FactType.ORDER_CLOSED)
    reconcile()
    return Finding.objects.get(coupon=coupon, status=FindingStatus.OPEN)


def reconcile(**kwargs):
    return reconcile_run(actor="test", **kwargs)


def open_findings() -> list[Finding]:
    return list(Finding.objects.filter(status=FindingStatus.OPEN).order_by("id"))


def found(coupon) -> set[tuple[str, str]]:
    """(kind, severity) of the coupon's open findings."""
    return {(f.kind, f.severity) for f in open_findings() if f.coupon_id == coupon.pk}


@pytest.fixture
def operator():
    return CommandContext(actor="operator-1")


@pytest.fixture
def coupons_exchange_queue():
    """A throwaway queue bound to the relay's exchange: what a re-drive publishes lands here."""
    try:
        connection = pika.BlockingConnection(pika.URLParameters(settings.BROKER_URL))
    except pika.exceptions.AMQPConnectionError as error:
        pytest.skip(f"RabbitMQ not reachable at BROKER_URL ({error!r}); CI runs it")
    channel = connection.channel()
    channel.exchange_declare(EXCHANGE, exchange_type="topic", durable=True)
    name = f"test-reconcile-{uuid.uuid4().hex[:12]}"
    channel.queue_declare(name, exclusive=True, auto_delete=True)
    channel.queue_bind(name, EXCHANGE, routing_key="#")

    def drain() -> list[str]:
        ids = []
        for method, properties, _ in channel.consume(name, inactivity_timeout=1.0):
            if method is None:
                break
            ids.append(properties.message_id)
            channel.basic_ack(method.delivery_tag)
        channel.cancel()
        return ids

    yield drain
    connection.close()


@pytest.fixture
def broker_exchange():
    """A throwaway exchange (and a queue bound to it) for a relay run, deleted after."""
    from tests.relay.conftest import TestQueue

    exchange = f"test-reconcile-{uuid.uuid4().hex[:12]}"
    try:
        queue = TestQueue(exchange)
    except pika.exceptions.AMQPConnectionError as error:
        pytest.skip(f"RabbitMQ not reachable at BROKER_URL ({error!r}); CI runs it")
    yield exchange
    queue.delete()

"""Faults for reconciliation to find, made by skipping a service on purpose: a fact stored
without its handler, a decision recorded without its command. Honest paths use the services."""

import itertools
import uuid

import pika
import pika.exceptions
import pytest

from coupons import clock
from coupons.models import FactType, Finding, FindingStatus, InboxMessage, OrderFact
from coupons.services import CommandContext, coupon_issue
from coupons.write.declared import declared_insert
from operations.reconcile import reconcile_run
from tests.conftest import lock

_messages = itertools.count(1)


def fact_without_handler(order_id: str, fact_type: str, payment_id: str = "") -> OrderFact:
    """The order service's fact as stored, but its handler (redeem, release) never ran."""
    message = declared_insert(InboxMessage(
        message_id=f"skipped-{next(_messages)}", fact_type=fact_type, order_id=order_id,
        occurred_at=clock.now(), payload={"order_id": order_id, "payment_id": payment_id},
        sender="order-service", sender_scope="client:0", content_hash="0" * 64,
        received_at=clock.now(), outcome={"action": "HANDLER_SKIPPED"},
    ), actor="client:0")
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
def broker_queue():
    """A throwaway exchange and a queue bound to it (its `.exchange`), deleted after."""
    from tests.operations.relay.conftest import TestQueue

    try:
        queue = TestQueue(f"test-reconcile-{uuid.uuid4().hex[:12]}")
    except pika.exceptions.AMQPConnectionError as error:
        pytest.skip(f"RabbitMQ not reachable at BROKER_URL ({error!r}); CI runs it")
    yield queue
    queue.delete()


@pytest.fixture
def redrive_exchange(broker_queue, settings):
    """Re-drives publish to the throwaway exchange (BROKER_EVENTS_EXCHANGE, as the relay's),
    not the shared `coupons` one."""
    settings.BROKER_EVENTS_EXCHANGE = broker_queue.exchange
    return broker_queue

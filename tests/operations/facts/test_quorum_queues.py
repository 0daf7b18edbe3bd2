"""The consumer's queues are quorum queues, which survive a node of a cluster; a classic queue
already there is used as it is (RabbitMQ changes no queue's type)."""

import logging
import uuid

import pika
import pika.exceptions
import pytest
from django.conf import settings

from coupons.models import InboxMessage
from operations import broker
from operations.facts_consumer import DEAD_LETTER_SUFFIX, FactConsumer
from tests.operations.facts.conftest import event_body

pytestmark = pytest.mark.django_db


def queue_type_is_quorum(name: str) -> bool:
    """Redeclared as a classic queue, a quorum queue is refused (406); a classic one is not."""
    connection = connect()
    try:
        connection.channel().queue_declare(name, durable=True,
                                           arguments={"x-queue-type": "classic"})
        return False
    except pika.exceptions.ChannelClosedByBroker as refused:
        assert refused.reply_code == broker.PRECONDITION_FAILED
        return True
    finally:
        connection.close()


@pytest.fixture
def names():
    name = f"test-quorum-{uuid.uuid4().hex[:12]}"
    queues = [f"{name}.q", f"{name}.q{DEAD_LETTER_SUFFIX}"]
    yield name, queues
    try:
        cleanup = broker.connect(settings.BROKER_URL)
    except pika.exceptions.AMQPConnectionError:
        return
    channel = cleanup.channel()
    for queue in queues:
        channel.queue_delete(queue)
    channel.exchange_delete(name)
    cleanup.close()


def connect():
    try:
        return broker.connect(settings.BROKER_URL)
    except pika.exceptions.AMQPConnectionError as error:
        pytest.skip(f"RabbitMQ not reachable at BROKER_URL ({error!r}); CI runs it")


def test_the_consumer_declares_its_queue_and_dead_letters_as_quorum_queues(
    names, service_client
):
    exchange, queues = names
    connect().close()  # or the skip
    consumer = FactConsumer(client=service_client[0], exchange=exchange, queue=queues[0])
    consumer.connect()
    consumer.close()
    assert [queue_type_is_quorum(queue) for queue in queues] == [True, True]


def test_a_classic_queue_already_there_is_used_with_a_warning(
    names, service_client, clock, caplog
):
    exchange, queues = names
    setup = connect()
    setup.channel().queue_declare(queues[0], durable=True)  # classic, from before
    setup.close()
    consumer = FactConsumer(client=service_client[0], exchange=exchange, queue=queues[0])
    with caplog.at_level(logging.WARNING, logger="operations.broker"):
        consumer.connect()
    consumer.channel.basic_publish(exchange, "fact", event_body(
        "q1", "OrderClosed", clock.now(), order_id="O1"))
    report = consumer.run(once=True)
    consumer.close()

    assert report.counts == {"PROCESSED": 1}
    assert InboxMessage.objects.filter(message_id="q1").exists()
    assert [r.getMessage() for r in caplog.records if r.name == "operations.broker"] == [
        f"queue {queues[0]} exists with other arguments than "
        "{'x-queue-type': 'quorum', 'x-single-active-consumer': True}; used as it is"]
    assert [queue_type_is_quorum(queue) for queue in queues] == [False, True]

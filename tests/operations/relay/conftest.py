"""The real RabbitMQ (BROKER_URL): a throwaway exchange and queue per test, deleted after."""

import json
import uuid

import pika
import pika.exceptions
import pytest
from django.conf import settings

from operations.relay import Relay


class TestQueue:
    """A queue bound to the test's exchange with '#': it sees every event the relay sends."""

    def __init__(self, exchange: str):
        self.exchange = exchange
        self.name = f"{exchange}.q"
        self.connection = pika.BlockingConnection(pika.URLParameters(settings.BROKER_URL))
        self.channel = self.connection.channel()
        self.channel.exchange_declare(exchange, exchange_type="topic", durable=True)
        self.channel.queue_declare(self.name, durable=True)
        self.channel.queue_bind(self.name, exchange, routing_key="#")

    def drain(self, timeout: float = 1.0, limit: int | None = None) -> list[dict]:
        """Every message now in the queue (or the first `limit`): routing key, properties and
        the decoded body."""
        messages = []
        for method, properties, body in self.channel.consume(self.name, inactivity_timeout=timeout):
            if method is None:
                break
            messages.append({
                "routing_key": method.routing_key, "message_id": properties.message_id,
                "headers": properties.headers, "delivery_mode": properties.delivery_mode,
                "body": json.loads(body),
            })
            self.channel.basic_ack(method.delivery_tag)
            if len(messages) == limit:
                break
        self.channel.cancel()
        return messages

    def delete(self):
        self.channel.queue_delete(self.name)
        self.channel.exchange_delete(self.exchange)
        self.connection.close()


@pytest.fixture
def broker_queue():
    exchange = f"test-relay-{uuid.uuid4().hex[:12]}"
    try:
        queue = TestQueue(exchange)
    except pika.exceptions.AMQPConnectionError as error:
        pytest.skip(f"RabbitMQ not reachable at BROKER_URL ({error!r}); CI runs it")
    yield queue
    queue.delete()


@pytest.fixture
def make_relay(broker_queue):
    relays = []

    def make(**kwargs):
        kwargs.setdefault("exchange", broker_queue.exchange)
        relay = Relay(**kwargs)
        relays.append(relay)
        return relay

    yield make
    for relay in relays:
        relay.close()

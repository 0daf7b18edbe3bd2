"""The real RabbitMQ (BROKER_URL): a throwaway facts exchange, queue and dead-letter queue per
test, deleted after, and a consumer bound to them."""

import json
import uuid

import pika
import pika.exceptions
import pytest
from django.conf import settings

from operations.facts_consumer import DEAD_LETTER_SUFFIX, FactConsumer


class FactsBroker:
    """Publishes raw bodies the way a sending service would, and reads the dead letters."""

    def __init__(self, name: str):
        self.exchange, self.queue = name, f"{name}.q"
        self.dead_letter_queue = self.queue + DEAD_LETTER_SUFFIX
        self.connection = pika.BlockingConnection(pika.URLParameters(settings.BROKER_URL))
        self.channel = self.connection.channel()
        self.channel.confirm_delivery()
        self.channel.exchange_declare(self.exchange, exchange_type="topic", durable=True)
        self.channel.queue_declare(self.queue, durable=True)
        self.channel.queue_bind(self.queue, self.exchange, routing_key="#")

    def publish(self, body: bytes, routing_key="fact", headers=None) -> None:
        self.channel.basic_publish(
            self.exchange, routing_key, body,
            properties=pika.BasicProperties(delivery_mode=2, headers=headers,
                                            content_type="application/json"),
        )

    def waiting(self) -> int:
        return self.channel.queue_declare(self.queue, passive=True).method.message_count

    def dead_letters(self) -> list[dict]:
        letters = []
        while True:
            method, properties, body = self.channel.basic_get(self.dead_letter_queue)
            if method is None:
                return letters
            letters.append({"body": body, "headers": properties.headers,
                            "details": json.loads(properties.headers["dead_letter_details"])})
            self.channel.basic_ack(method.delivery_tag)

    def delete(self):
        for queue in (self.queue, self.dead_letter_queue):
            self.channel.queue_delete(queue)
        self.channel.exchange_delete(self.exchange)
        self.connection.close()


@pytest.fixture
def facts_broker():
    try:
        broker = FactsBroker(f"test-facts-{uuid.uuid4().hex[:12]}")
    except pika.exceptions.AMQPConnectionError as error:
        pytest.skip(f"RabbitMQ not reachable at BROKER_URL ({error!r}); CI runs it")
    yield broker
    broker.delete()


@pytest.fixture
def make_consumer(facts_broker):
    consumers = []

    def make(client, **kwargs):
        consumer = FactConsumer(client=client, exchange=facts_broker.exchange,
                                queue=facts_broker.queue, **kwargs)
        consumers.append(consumer)
        return consumer

    yield make
    for consumer in consumers:
        consumer.close()


def event_body(message_id, fact_type, occurred_at, **payload) -> bytes:
    return json.dumps({"message_id": message_id, "type": fact_type,
                       "occurred_at": occurred_at.isoformat(), "payload": payload}).encode()

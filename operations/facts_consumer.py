"""Facts from the broker: the inbox of POST /api/v1/events, fed from a durable queue.

Topology (declared by the consumer on start; declaring is idempotent):
  exchange `facts` (topic, durable) --#--> queue `coupons.facts` (quorum)
  dead letters: queue `coupons.facts.dead` (quorum), published to through the default
  exchange with the reason in headers (`dead_letter_code`, `dead_letter_reason`, ...).
Quorum queues keep each message on a majority of a cluster's nodes (one node: a durable queue);
BROKER_URL may list the cluster's nodes, and a reconnect goes to the first that answers.
A message's body is exactly a POST /api/v1/events body: {message_id, type, occurred_at,
payload}; its routing key is the fact type by convention but is never trusted.

Who sent it: a broker message names no sender the inbox could believe (any publisher can write
any header). The consumer runs as one registered service client (`--client NAME`), and every
message on its queue is that client's: its fact-type grants apply exactly as over HTTP, and its
messages are de-duplicated in its scope, so the same message id sent over HTTP by that client
and over the broker is one fact. Run one consumer (and queue) per sending service and let the
broker's permissions decide who may publish to that queue's exchange. A message whose `sender`
header names another client is dead-lettered, not re-attributed.

Acknowledgement:
- processed or a duplicate: acked after the inbox transaction committed. A crash before the
  ack redelivers it, and the inbox answers DUPLICATE: nothing happens twice.
- poison (bad JSON, unknown type, invalid payload, a fact the inbox refuses for good, a bug):
  copied to the dead-letter queue with the reason, confirmed by the broker, then acked. It
  never blocks the queue and never vanishes.
- transient (the database unreachable, the fact's coupon row held past the command lock
  timeout): not acked. The consumer closes its broker connection, so the broker puts the
  message back, and reconnects after a back-off.

Order: the queue has one active consumer (`x-single-active-consumer`: a second consumer
started on it waits as a standby) and that consumer has one message at a time (prefetch 1), so
the message put back is the only one out and is the next one delivered again. With more out, a
quorum queue handed them back behind newer ones: 5 of 40 orders' "OrderClosed, then
PaymentSucceeded" were processed payment-first after database cuts (tests/operations/facts/
test_fact_order.py). Never a nack with requeue either, for the same reason.

`run_forever` survives the loss of the database or the broker: it logs, counts
(`coupons_worker_connection_losses_total`), backs off and reconnects; it never exits on them.
"""

import contextlib
import json
import logging
import threading
from collections import Counter
from dataclasses import dataclass, field

import pika
import pika.exceptions
from django.conf import settings
from django.db import connection
from rest_framework.exceptions import ValidationError

from common.request_context import bound
from coupons import clock
from coupons.api.intake import fact_receive
from coupons.errors import CouponBusy, CouponError
from coupons.models import ServiceClient
from operations import broker
from operations.metrics import FACTS_CONSUMED
from operations.worker import CONNECTION_LOSSES, DATABASE_ERRORS, Lost, run_until_stopped

log = logging.getLogger(__name__)

EXCHANGE = "facts"
QUEUE = "coupons.facts"
DEAD_LETTER_SUFFIX = ".dead"
# Messages out to the consumer unacked at once: one, so that a message put back is the next
# delivered (see the module's docstring).
PREFETCH = 1
# How long `--once` waits on an empty queue before it calls the queue drained.
IDLE_SECONDS = 0.5


class Poison(Exception):
    """A message that can never succeed: dead-lettered with this code and reason."""

    def __init__(self, code: str, reason: str, details=None):
        super().__init__(reason)
        self.code, self.reason, self.details = code, reason, details or {}


class Transient(Exception):
    """Worth retrying later: the message goes back to the queue."""


@dataclass
class ConsumeReport:
    counts: Counter = field(default_factory=Counter)  # PROCESSED, DUPLICATE, DEAD_LETTERED
    error: Exception | None = None

    def summary(self) -> str:
        return ", ".join(f"{k.lower()} {n}" for k, n in sorted(self.counts.items())) or "nothing"


def decode(body: bytes) -> object:
    # The limit POST /events has (Django refuses a larger body before parsing it).
    if len(body) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        raise Poison("VALIDATION_ERROR", "The body is too large.",
                     {"size": len(body), "limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE})
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise Poison("INVALID_JSON", f"The body is not JSON: {error}") from None


def handle(body: bytes, headers: dict, client_id: int) -> dict:
    """Run one message through the inbox as the consumer's client; answers the inbox's
    answer. Raises Poison or Transient."""
    data = decode(body)
    try:
        client = ServiceClient.objects.get(pk=client_id)
        if not client.is_active:
            # A revoked client's key stops working over HTTP at once; so does its queue.
            raise Transient(f"service client {client.name} is deactivated")
        claimed = headers.get("sender")
        if claimed is not None and claimed != client.name:
            raise Poison("SENDER_MISMATCH",
                         f"The message says it is from {claimed!r}; this queue is {client.name}'s.")
        return fact_receive(data=data, sender=client).payload()
    except ValidationError as error:
        raise Poison("VALIDATION_ERROR", "The fact is not valid.", error.detail) from None
    except CouponBusy as error:  # its coupon's row held elsewhere: retried, never refused
        raise Transient(f"coupon {error.details.get('coupon_id')} busy") from None
    except CouponError as error:  # refused for good: a grant missing, a message id reused
        raise Poison(error.code, str(error.message), error.details) from None
    except DATABASE_ERRORS as error:
        # The connection may be dead: Django opens a new one for the next message.
        CONNECTION_LOSSES.labels(process="consumer", connection="database").inc()
        connection.close_if_unusable_or_obsolete()
        raise Transient(f"database unavailable: {error}") from None
    except (Poison, Transient):
        raise
    except Exception as error:
        # A bug (over HTTP, a 500). Retrying here would stall the queue behind one message
        # until a release: dead-lettered with the error, re-driven once fixed.
        log.exception("fact consumer: unexpected error")
        raise Poison("INTERNAL_ERROR", f"{type(error).__name__}: {error}") from None


class FactConsumer:
    """One broker connection; `run()` consumes until the queue is idle (once) or `stop`."""

    def __init__(self, *, client: ServiceClient, url: str | None = None,
                 exchange: str = EXCHANGE, queue: str = QUEUE):
        self.client_id, self.client_actor = client.pk, client.actor
        self.url = url or settings.BROKER_URL
        self.exchange, self.queue = exchange, queue
        self.dead_letter_queue = queue + DEAD_LETTER_SUFFIX
        self.connection = self.channel = None

    def connect(self) -> None:
        if self.channel is not None and self.channel.is_open:
            return
        self.close()
        self.connection = broker.connect(self.url)
        channel = self.connection.channel()
        channel.exchange_declare(self.exchange, exchange_type="topic", durable=True)
        channel = broker.declare_quorum_queue(self.connection, channel, self.queue,
                                              single_active_consumer=True)
        channel = broker.declare_quorum_queue(self.connection, channel, self.dead_letter_queue)
        channel.queue_bind(self.queue, self.exchange, routing_key="#")
        # Confirms: a dead letter is acked away only after the broker has stored its copy.
        channel.confirm_delivery()
        channel.basic_qos(prefetch_count=PREFETCH)
        self.channel = channel

    def close(self) -> None:
        if self.connection is not None and self.connection.is_open:
            with contextlib.suppress(pika.exceptions.AMQPError):  # already going away
                self.connection.close()
        self.connection = self.channel = None

    def run(self, *, once: bool, stop: threading.Event | None = None) -> ConsumeReport:
        """Consume until `stop`, or with `once` until the queue is idle. A transient failure
        ends the run (its message and every later unacked one back in the queue, in order);
        so does a broker error, with `error` set."""
        stop = stop or threading.Event()
        report = ConsumeReport()
        try:
            self.connect()
            messages = self.channel.consume(self.queue, inactivity_timeout=IDLE_SECONDS)
            for method, properties, body in messages:
                if method is None:  # idle for IDLE_SECONDS
                    if once or stop.is_set():
                        break
                    continue
                outcome = self._take(method, properties, body)
                report.counts[outcome] += 1
                FACTS_CONSUMED.labels(outcome=outcome).inc()
                if outcome == "RETRY":
                    # Closed, not nacked: see the module's docstring.
                    self.close()
                    return report
                if stop.is_set():
                    break
            self.channel.cancel()  # unacked prefetched messages go back to the queue
        except broker.BROKER_ERRORS as error:
            report.error = error
            self.close()
        return report

    def _take(self, method, properties, body: bytes) -> str:
        with bound(request_id=properties.message_id or f"delivery-{method.delivery_tag}",
                   client=self.client_actor):
            return self._handle(method, properties, body)

    def _handle(self, method, properties, body: bytes) -> str:
        headers = properties.headers or {}
        try:
            answer = handle(body, headers, self.client_id)
        except Transient as error:
            log.warning("fact consumer: %s; message %s and the later ones back to the queue",
                        error, properties.message_id)
            return "RETRY"
        except Poison as poison:
            self.dead_letter(method, properties, body, poison)
            self.channel.basic_ack(method.delivery_tag)
            log.warning("fact consumer: dead-lettered %s: %s %s",
                        properties.message_id, poison.code, poison.reason)
            return "DEAD_LETTERED"
        self.channel.basic_ack(method.delivery_tag)
        log.info("fact consumer: %s %s", answer["status"], answer["message_id"],
                 extra={"coupon_id": answer["outcome"].get("coupon_id")})
        return answer["status"]

    def dead_letter(self, method, properties, body: bytes, poison: Poison) -> None:
        headers = {
            **(properties.headers or {}),
            "dead_letter_code": poison.code,
            "dead_letter_reason": poison.reason,
            "dead_letter_details": json.dumps(poison.details, default=str)[:4000],
            "dead_letter_at": clock.now().isoformat(),
            "original_exchange": method.exchange,
            "original_routing_key": method.routing_key,
        }
        # Before the ack: a silent broker must not hold the queue longer than a confirm timeout.
        with broker.deadline(self.connection, settings.BROKER_CONFIRM_TIMEOUT_SECONDS):
            self.channel.basic_publish(
                "", self.dead_letter_queue, body,
                properties=pika.BasicProperties(
                    message_id=properties.message_id, content_type=properties.content_type,
                    delivery_mode=pika.DeliveryMode.Persistent, headers=headers,
                ),
            )


def run_forever(consumer: FactConsumer, *, stop: threading.Event, report=log.warning) -> None:
    """Consume until `stop` is set. A transient failure or a lost broker connection: report,
    count, back off (doubling, capped) and reconnect; never exit on them."""

    def step() -> None:
        result = consumer.run(once=False, stop=stop)
        # It got somewhere since the last failure: that failure no longer counts.
        progressed = any(n for outcome, n in result.counts.items() if outcome != "RETRY")
        if result.error is not None:
            kind, reason = "broker", f"broker error: {result.error!r}"
        elif result.counts["RETRY"]:
            kind, reason = None, "a message to retry (database unreachable?)"
        else:
            return  # stopped
        raise Lost(kind, result.error, progressed=progressed, describe=lambda delay: (
            f"fact consumer: {reason}; reconnecting in {delay:.1f}s"))

    run_until_stopped(step, process="consumer", stop=stop, report=report)

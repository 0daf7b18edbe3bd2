"""Outbox relay: publish committed outbox rows to RabbitMQ, then mark them published.

One batch is one database transaction: claim unpublished rows in id order
(`FOR UPDATE SKIP LOCKED`, so several relays share the work), publish each as a persistent
message and wait for the broker's confirm, then set `published_at` on the confirmed rows only.
A relay killed before its commit leaves the rows unpublished: the next batch sends them again
(a duplicate with the same event id), never loses one.

Per-coupon order: a coupon's rows have increasing ids in version order (each command holds the
coupon row lock while it inserts its row). A batch claims whole coupons: it locks
each coupon's earliest unpublished row (SKIP LOCKED) and then that coupon's later rows, so a
coupon another relay holds is skipped whole and a frozen relay (stopped, or its host gone until
the database's idle-in-transaction timeout ends its transaction) blocks only its own coupons.
A failed publish blocks the same coupon's later rows for the rest of the batch; a row whose
coupon has an earlier unpublished row outside this batch (another relay holds it without the
coupon's earliest row, as a relay from before whole-coupon claims would) is left for later.

Resilience: each publish waits for its confirm at most BROKER_CONFIRM_TIMEOUT_SECONDS
(operations/broker.py), so the batch's transaction is never held longer by a silent broker.
`run_forever` survives the loss of the broker, the database and its LISTEN connection: it logs,
counts it (`coupons_worker_connection_losses_total`), backs off and reconnects, to the first of
BROKER_URL's nodes that answers when it lists a cluster's.
"""

import contextlib
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import pika
import pika.exceptions
import psycopg
from django.conf import settings
from django.db import connection, transaction
from django.db.models.functions import Now

from coupons.models import OutboxEvent
from operations import broker, worker
from operations.metrics import RELAY_PUBLISH_FAILURES
from operations.selectors import outbox_lag
from operations.worker import CONNECTION_LOSSES, DATABASE_ERRORS, Lost, run_until_stopped

log = logging.getLogger(__name__)

# Outbox inserts NOTIFY this channel at commit (trigger `notify_relay`).
NOTIFY_CHANNEL = "coupons_outbox"
# A NOTIFY missed (the LISTEN connection was reopened meanwhile) waits at most this long.
FALLBACK_POLL_SECONDS = 1.0


@dataclass
class BatchResult:
    published: int = 0
    failed: int = 0  # publish refused or unconfirmed: stays unpublished
    held: int = 0  # waits behind an earlier event of its coupon
    error: Exception | None = field(default=None)


def message_body(event: OutboxEvent) -> dict:
    """The stored payload with the event's own id and type first: a consumer that forwards or
    stores bodies without their AMQP properties keeps its de-duplication key."""
    return {"event_id": event.pk, "event_type": event.event_type, **event.payload}


def message_properties(event: OutboxEvent) -> pika.BasicProperties:
    """The stable event id, coupon and version travel with the message, for de-duplication."""
    return pika.BasicProperties(
        message_id=str(event.pk),
        type=event.event_type,
        content_type="application/json",
        delivery_mode=pika.DeliveryMode.Persistent,
        timestamp=int(event.created_at.timestamp()),
        headers={
            "event_id": event.pk,
            "event_type": event.event_type,
            "coupon_id": event.coupon_id,
            # None for an event about the whole ledger (LedgerCheckpointed).
            "state_version": event.payload.get("state_version"),
        },
    )


class Relay:
    """One broker connection; `run_batch()` publishes up to `batch_size` rows."""

    def __init__(
        self, *, url: str | None = None, exchange: str | None = None, batch_size: int = 200,
        shard: int = 0, shards: int = 1, coupon_id: int | None = None,
        on_published: Callable[["Relay", OutboxEvent], None] | None = None,
    ):
        self.url = url or settings.BROKER_URL
        self.exchange = exchange or settings.BROKER_EVENTS_EXCHANGE
        self.batch_size = batch_size
        self.shard, self.shards = shard, shards
        # One coupon's events only: reconciliation re-drives a coupon whose event was stuck.
        self.coupon_id = coupon_id
        # Test hook: runs after each confirmed publish, before `published_at` is written.
        self.on_published = on_published
        self.connection = None
        self.channel = None

    def connect(self) -> None:
        if self.channel is not None and self.channel.is_open:
            try:
                # Answers the broker's heartbeats while the relay idles between batches.
                self.connection.process_data_events(time_limit=0)
                return
            except pika.exceptions.AMQPError as error:
                # Gone while idle: open a new one below.
                CONNECTION_LOSSES.labels(process="relay", connection="broker").inc()
                log.warning("relay: broker connection lost while idle (%r); reconnecting", error)
        self.close()
        self.connection = broker.connect(self.url)
        self.channel = self.connection.channel()
        self.channel.confirm_delivery()
        self.channel.exchange_declare(self.exchange, exchange_type="topic", durable=True)

    def close(self) -> None:
        if self.connection is not None and self.connection.is_open:
            # Already going away: a new connection replaces it.
            with contextlib.suppress(pika.exceptions.AMQPError):
                self.connection.close()
        self.connection = self.channel = None

    def publish(self, event: OutboxEvent) -> None:
        """Returns once the broker confirmed; raises an AMQPError otherwise, at the latest
        after BROKER_CONFIRM_TIMEOUT_SECONDS."""
        with broker.deadline(self.connection, settings.BROKER_CONFIRM_TIMEOUT_SECONDS):
            self.channel.basic_publish(
                self.exchange, event.event_type, json.dumps(message_body(event)).encode(),
                properties=message_properties(event), mandatory=False,
            )

    def run_batch(self) -> BatchResult:
        result = BatchResult()
        try:
            self.connect()
        except broker.BROKER_ERRORS as exc:
            RELAY_PUBLISH_FAILURES.labels(stage="connect").inc()
            self.close()
            result.error = exc
            return result
        with transaction.atomic():
            events = self._claim()
            confirmed, blocked = [], set()
            in_order = self._in_coupon_order(events)
            for event in events:
                if event.coupon_id in blocked or event.pk not in in_order:
                    result.held += 1
                    continue
                try:
                    self.publish(event)
                except pika.exceptions.AMQPError as exc:
                    RELAY_PUBLISH_FAILURES.labels(stage="publish").inc()
                    blocked.add(event.coupon_id)
                    result.failed += 1
                    result.error = result.error or exc  # the first: the later ones follow it
                    continue
                confirmed.append(event.pk)
                if self.on_published is not None:
                    self.on_published(self, event)
            # The database's clock, which its trigger would stamp anyway: retention measures
            # an event's age from it (coupons.models.append_only.OnDatabaseClock).
            result.published = OutboxEvent.objects.filter(
                pk__in=confirmed, published_at__isnull=True
            ).update(published_at=Now())
        if result.error is not None:
            self.close()
        return result

    def _claim(self) -> list[OutboxEvent]:
        """Whole coupons: a relay holds a coupon by locking its earliest unpublished row.

        `heads` locks, SKIP LOCKED, the earliest unpublished row of up to `batch_size` coupons
        (an event without a coupon is its own head); the batch is then those coupons' unpublished
        rows in id order. A coupon whose earliest row another relay holds is skipped whole, so
        a relay frozen mid-batch holds back only its own coupons: its coupons' later rows can
        no longer fill everyone else's window.
        """
        table = connection.ops.quote_name(OutboxEvent._meta.db_table)
        where, params = ["TRUE"], []
        if self.shards > 1:
            # Events without a coupon (LedgerCheckpointed) go out from shard 0.
            where.append("COALESCE(o.coupon_id %% %s, 0) = %s")
            params += [self.shards, self.shard]
        if self.coupon_id is not None:
            where.append("o.coupon_id = %s")
            params.append(self.coupon_id)
        return list(OutboxEvent.objects.raw(f"""
            WITH heads AS (
                SELECT o.id, o.coupon_id FROM {table} o
                 WHERE o.published_at IS NULL AND {" AND ".join(where)}
                   AND NOT EXISTS (SELECT 1 FROM {table} p
                                    WHERE p.coupon_id = o.coupon_id AND p.published_at IS NULL
                                      AND p.id < o.id)
                 ORDER BY o.id LIMIT %s FOR UPDATE OF o SKIP LOCKED
            )
            SELECT o.* FROM {table} o
             WHERE o.published_at IS NULL
               AND (o.id IN (SELECT id FROM heads)
                    OR o.coupon_id IN (SELECT coupon_id FROM heads))
             ORDER BY o.id LIMIT %s FOR UPDATE OF o SKIP LOCKED
        """, [*params, self.batch_size, self.batch_size]))  # noqa: S608 - names are the model's

    @staticmethod
    def _in_coupon_order(events: list[OutboxEvent]) -> set[int]:
        """The claimed rows preceded only by claimed rows among their coupon's unpublished rows.

        A row another relay has published and committed no longer counts: it was confirmed by
        the broker before that commit, so it is already ahead of anything published now.
        """
        claimed = {event.pk for event in events}
        # Events without a coupon (checkpoints) are claimed in id order and need no other.
        in_order = {event.pk for event in events if event.coupon_id is None}
        last_claimed: dict[int, int] = {}
        for event in events:
            if event.coupon_id is None:
                continue
            last_claimed[event.coupon_id] = max(event.pk, last_claimed.get(event.coupon_id, 0))
        unpublished = (
            OutboxEvent.objects.filter(
                published_at__isnull=True, coupon_id__in=last_claimed,
                id__lte=max(last_claimed.values(), default=0),
            ).order_by("id").values_list("coupon_id", "id")
        )
        gapped = set()
        for coupon, pk in unpublished:
            if pk > last_claimed[coupon] or coupon in gapped:
                continue
            if pk in claimed:
                in_order.add(pk)
            else:
                gapped.add(coupon)
        return in_order


class Wakeup:
    """Waits for the next committed outbox row (LISTEN).

    LISTEN starts before the first batch, so a commit between a batch and the wait is queued
    on the listening connection, not missed. The listening connection is its own (not the
    pool's: a pooled one closed without being given back would shrink the pool); lost, it is
    dropped and `wait` opens a new one (a commit meanwhile is found by the next batch anyway).
    """

    def __init__(self):
        self.listener = None

    def listen(self) -> None:
        """Opens the LISTEN connection unless open; raises psycopg.Error if it cannot."""
        if self.listener is not None:
            return
        if settings.RELAY_LISTEN_DATABASE_URL:  # behind PgBouncer: straight to the primary
            self.listener = psycopg.connect(settings.RELAY_LISTEN_DATABASE_URL, autocommit=True,
                                            **worker.session_options())
        else:
            params = connection.get_connection_params()
            params.pop("cursor_factory", None)  # Django's, for its own cursors
            self.listener = psycopg.connect(**params, autocommit=True)
        self.listener.execute(f"LISTEN {NOTIFY_CHANNEL}")

    def wait(self, stop: threading.Event) -> None:
        """Raises psycopg.Error when the LISTEN connection is lost."""
        try:
            for _ in self.listener.notifies(timeout=FALLBACK_POLL_SECONDS, stop_after=1):
                break
        except psycopg.Error:
            self.close()
            raise

    def close(self) -> None:
        if self.listener is not None:
            with contextlib.suppress(psycopg.Error):
                self.listener.close()
        self.listener = None


def lag_text() -> str:
    try:
        return str(outbox_lag())
    except DATABASE_ERRORS:
        return "unknown (database unreachable)"


def run_forever(relay: Relay, *, stop: threading.Event, report=log.warning) -> None:
    """Publish until `stop` is set. The broker or the database lost (the batch's connection or
    the LISTEN one): the rows stay unpublished, the loss is reported and counted, and the relay
    backs off and reconnects; it never exits on such an error."""
    wakeup = Wakeup()

    def lost(kind: str, error: Exception, *, progressed: bool = False) -> Lost:
        return Lost(kind, error, progressed=progressed, describe=lambda delay: (
            f"{kind} error: {error!r}; lag: {lag_text()}; retrying in {delay:.1f}s"))

    def step() -> None:
        try:
            wakeup.listen()  # before the batch: a commit after it is then not missed
            result = relay.run_batch()
        except (*DATABASE_ERRORS, psycopg.Error) as error:
            # Django opens a new connection (from the pool, checked) for the next batch.
            with contextlib.suppress(*DATABASE_ERRORS):
                connection.close()
            # Nothing answers the broker's heartbeats during the back-off: reopen after it.
            relay.close()
            raise lost("database", error) from error
        if result.error is not None:
            raise lost("broker", result.error)
        if result.held:
            stop.wait(0.05)  # another relay is finishing a coupon's earlier event
        elif result.published < relay.batch_size:
            try:
                wakeup.wait(stop)
            except psycopg.Error as error:
                raise lost("listen", error, progressed=True) from error

    try:
        run_until_stopped(step, process="relay", stop=stop, report=report)
    finally:
        wakeup.close()

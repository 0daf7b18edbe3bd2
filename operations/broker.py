"""What the relay and the fact consumer share about the broker: the nodes of BROKER_URL,
connection parameters carrying the heartbeat and timeouts of the settings, queues declared to
survive a node, and a deadline on a wait for the broker."""

import contextlib
import logging

import pika
import pika.exceptions
from django.conf import settings
from pika.adapters.utils.connection_workflow import AMQPConnectorException

log = logging.getLogger(__name__)

# What a lost, refused or silent broker raises through pika: a timeout while connecting
# (AMQPConnectorStackTimeout) is not an AMQPError.
BROKER_ERRORS = (pika.exceptions.AMQPError, AMQPConnectorException)


class BrokerTimeout(pika.exceptions.AMQPConnectionError):
    """The broker did not answer in BROKER_CONFIRM_TIMEOUT_SECONDS; the connection was dropped."""


def connection_parameters(url: str) -> pika.URLParameters:
    parameters = pika.URLParameters(url)
    parameters.heartbeat = settings.BROKER_HEARTBEAT_SECONDS
    timeout = settings.BROKER_CONFIRM_TIMEOUT_SECONDS
    parameters.socket_timeout = timeout  # the TCP connect
    parameters.stack_timeout = timeout  # connect and the AMQP handshake together
    # The broker blocks publishers when short of memory or disk: give up as on a silence.
    parameters.blocked_connection_timeout = timeout
    return parameters


def node_urls(broker_url: str) -> list[str]:
    """BROKER_URL is one AMQP URL, or several separated by commas: the nodes of one cluster."""
    return [url.strip() for url in broker_url.split(",") if url.strip()]


def connect(broker_url: str) -> pika.BlockingConnection:
    """A connection to the first node of `broker_url` that answers, in the order listed: at
    each reconnect a dead node is passed over (refused at once, or after the connect timeout)
    for the next."""
    return pika.BlockingConnection([connection_parameters(url) for url in node_urls(broker_url)])


# Durable, its messages on a majority of the cluster's nodes: a node lost loses no message and
# the queue goes on on the others. On one node it behaves as a durable classic queue.
QUORUM_QUEUE = {"x-queue-type": "quorum"}
SINGLE_ACTIVE_CONSUMER = "x-single-active-consumer"
PRECONDITION_FAILED = 406


def declare_quorum_queue(connection: pika.BlockingConnection, channel, name: str, *,
                         single_active_consumer: bool = False):
    """Declares `name` a quorum queue (`single_active_consumer`: delivering to one consumer at
    a time, the others standing by); answers the channel to go on with.

    A queue that already exists as a classic one keeps it (RabbitMQ changes no queue's type in
    place; docs/deploy.md says how to move one): the broker refuses the declaration and closes
    the channel, so the queue is checked on a new one, which is answered, with a warning.
    """
    arguments = {**QUORUM_QUEUE, **({SINGLE_ACTIVE_CONSUMER: True}
                                    if single_active_consumer else {})}
    try:
        channel.queue_declare(name, durable=True, arguments=arguments)
        return channel
    except pika.exceptions.ChannelClosedByBroker as refused:
        if refused.reply_code != PRECONDITION_FAILED:
            raise
    channel = connection.channel()
    channel.queue_declare(name, passive=True)
    log.warning("queue %s exists with other arguments than %s; used as it is", name, arguments)
    return channel


@contextlib.contextmanager
def deadline(connection: pika.BlockingConnection, seconds: float):
    """Drop `connection` if the block still waits on it after `seconds`.

    pika's BlockingConnection waits for a publisher confirm with no timeout: a broker that went
    silent (a partition) holds it until the heartbeat gives up, while the relay's transaction
    holds its rows. The timer runs in the connection's own I/O loop, which turns while pika
    waits, and ends the stream as pika's own `blocked_connection_timeout` does; the wait then
    raises BrokerTimeout. pika has no public call for either step, hence `_impl`.
    """
    if connection.is_closed:  # the wait raises at once; pika's I/O loop is gone
        yield
        return
    impl = connection._impl
    timer = impl._adapter_call_later(
        seconds, lambda: impl._terminate_stream(BrokerTimeout(f"no answer in {seconds}s")))
    try:
        yield
    finally:
        if not connection.is_closed:  # closing removed the timer with the I/O loop
            impl._adapter_remove_timeout(timer)

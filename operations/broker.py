"""What the relay and the fact consumer share about the broker: connection parameters carrying
the heartbeat and timeouts of the settings, and a deadline on a wait for the broker."""

import contextlib

import pika
import pika.exceptions
from django.conf import settings
from pika.adapters.utils.connection_workflow import AMQPConnectorException

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

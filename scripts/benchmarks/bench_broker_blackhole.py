"""How long a publisher-confirm wait stalls when the broker goes silent.

A TCP proxy (tests/faults.py) between pika and RabbitMQ (127.0.0.1:5672) drops everything
after the channel is open. "before": pika's defaults, as the relay once connected
(the broker's 60 s heartbeat ends the wait, about two minutes). "after": the relay's
parameters and confirm deadline (BROKER_CONFIRM_TIMEOUT_SECONDS, BROKER_HEARTBEAT_SECONDS).

    .venv/bin/python scripts/benchmarks/bench_broker_blackhole.py
"""

import contextlib
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

import pika  # noqa: E402
from django.conf import settings  # noqa: E402

from operations import broker  # noqa: E402
from tests.faults import TcpProxy  # noqa: E402


def stall(parameters, wait) -> float:
    proxy = TcpProxy("127.0.0.1", 5672)
    exchange = f"bench-blackhole-{uuid.uuid4().hex[:8]}"
    connection = pika.BlockingConnection(parameters(proxy.url()))
    channel = connection.channel()
    channel.confirm_delivery()
    channel.exchange_declare(exchange, exchange_type="topic", auto_delete=True)
    proxy.blackhole()
    started = time.monotonic()
    with contextlib.suppress(*broker.BROKER_ERRORS), wait(connection):
        channel.basic_publish(exchange, "x", b"{}")
    stalled = time.monotonic() - started
    proxy.close()
    return stalled


def main() -> None:
    after = stall(broker.connection_parameters,
                  lambda c: broker.deadline(c, settings.BROKER_CONFIRM_TIMEOUT_SECONDS))
    print(f"after:  {after:6.1f} s (confirm timeout {settings.BROKER_CONFIRM_TIMEOUT_SECONDS} s, "
          f"heartbeat {settings.BROKER_HEARTBEAT_SECONDS} s)", flush=True)
    before = stall(pika.URLParameters, lambda c: contextlib.nullcontext())
    print(f"before: {before:6.1f} s (pika defaults; the broker's heartbeat)")
    print(f"ratio:  {before / after:6.1f}x")


if __name__ == "__main__":
    main()

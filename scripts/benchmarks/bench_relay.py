"""Benchmark the outbox relay: events published per second by `relay_outbox --once`.

Rerun (PostgreSQL and the RabbitMQ at BROKER_URL, default amqp://guest:guest@127.0.0.1:5672/):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_relay.py --coupons 1000

It creates a throwaway database (`coupon_bench_relay` unless --db-name) and drops it at the end, as
scripts/benchmarks/bench_scan_leases.py does. It writes 3 events per coupon through the real
services
(ISSUE, LOCK, REDEEM), then times `relay_outbox --once` publishing them to a throwaway topic
exchange with one bound queue (persistent messages, one publisher confirm per message), and
deletes both afterwards.
"""

import argparse
import os
import time
from decimal import Decimal

from bench_setup import load_average, scratch_exchange, throwaway_database


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coupons", type=int, default=1000, help="coupons; 3 events each")
    parser.add_argument("--batch-size", type=int, default=200)
    parser.add_argument("--db-name", default="coupon_bench_relay",
                        help="throwaway PostgreSQL database, created and dropped by this script")
    return parser.parse_args()


def write_events(coupons: int) -> int:
    from coupons.models import OutboxEvent
    from coupons.services import (
        CommandContext,
        LeaseProof,
        coupon_issue,
        coupon_lock,
        coupon_redeem,
        template_create,
    )

    ctx = CommandContext(actor="bench")
    template = template_create(code="bench", name="bench", kind="AMOUNT_OFF",
                               face_value=Decimal("10.00"), min_order_amount=Decimal("0"),
                               valid_days=30)
    for n in range(coupons):
        coupon = coupon_issue(template_id=template.pk, user_id=f"u{n}", ctx=ctx).coupon
        locked = coupon_lock(coupon_id=coupon.pk, order_id=f"o{n}", user_id=coupon.user_id,
                             order_amount=Decimal("50.00"), ctx=ctx)
        proof = LeaseProof.from_token(order_id=f"o{n}", lock_token=locked.lock_token,
                                      expected_version=locked.state_version)
        coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id=f"p{n}", ctx=ctx)
    return OutboxEvent.objects.filter(published_at__isnull=True).count()


def bench(args) -> None:
    from django.core.management import call_command

    started = time.monotonic()
    events = write_events(args.coupons)
    print(f"wrote {events} outbox rows through the services "
          f"in {time.monotonic() - started:.1f}s")
    with scratch_exchange("bench-relay") as (channel, exchange):
        started = time.monotonic()
        call_command("relay_outbox", "--once", "--exchange", exchange,
                     "--batch-size", str(args.batch_size))
        elapsed = time.monotonic() - started
        queued = channel.queue_declare(exchange, passive=True).method.message_count
    print(f"relay_outbox --once: {events} events in {elapsed:.2f}s = "
          f"{events / elapsed:.0f} events/s (queue holds {queued})")


def main() -> None:
    args = parse_args()
    with throwaway_database(args.db_name):
        bench(args)
    print(f"load average {load_average()} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

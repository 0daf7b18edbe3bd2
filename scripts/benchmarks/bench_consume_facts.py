"""Benchmark the fact consumer: facts per second through `consume_facts --once`.

Rerun (PostgreSQL and the RabbitMQ at BROKER_URL, default amqp://guest:guest@127.0.0.1:5672/):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_consume_facts.py --orders 500

It runs in a throwaway database (`coupon_bench_facts` unless --db-name; without DATABASE_URL on
the checkout's embedded PostgreSQL cluster), dropped at the end. It locks one coupon per order
through the services, publishes a PaymentSucceeded per order (each redeems its coupon), a
redelivery of every tenth and one poison message per hundred to a throwaway exchange, then
times `consume_facts --once` and deletes the exchange and queues.
"""

import argparse
import json
import os
import time
from decimal import Decimal

from bench_setup import load_average, scratch_exchange, throwaway_database


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=500)
    parser.add_argument("--prefetch", type=int, default=20)
    parser.add_argument("--db-name", default="coupon_bench_facts",
                        help="throwaway PostgreSQL database, created and dropped by this script")
    return parser.parse_args()


def lock_coupons(orders: int) -> None:
    from coupons.services import CommandContext, coupon_issue, coupon_lock, template_create

    ctx = CommandContext(actor="bench")
    template = template_create(code="bench", name="bench", kind="AMOUNT_OFF",
                               face_value=Decimal("10.00"), min_order_amount=Decimal("0"),
                               valid_days=30)
    for n in range(orders):
        coupon = coupon_issue(template_id=template.pk, user_id=f"u{n}", ctx=ctx).coupon
        coupon_lock(coupon_id=coupon.pk, order_id=f"o{n}", user_id=coupon.user_id,
                    order_amount=Decimal("50.00"), ctx=ctx)


def messages(orders: int) -> list[bytes]:
    from coupons import clock

    now = clock.now().isoformat()
    bodies = []
    for n in range(orders):
        body = json.dumps({"message_id": f"m{n}", "type": "PaymentSucceeded", "occurred_at": now,
                           "payload": {"order_id": f"o{n}", "payment_id": f"p{n}"}}).encode()
        bodies.append(body)
        if n % 10 == 0:
            bodies.append(body)  # a redelivery
        if n % 100 == 0:
            bodies.append(b"{poison")
    return bodies


def bench(args) -> None:
    import pika
    from django.core.management import call_command

    from coupons.services import service_client_create

    started = time.monotonic()
    lock_coupons(args.orders)
    service_client_create(name="bench-orders", fact_types=["PaymentSucceeded"])
    print(f"locked {args.orders} coupons in {time.monotonic() - started:.1f}s")
    # consume_facts --queue makes `<name>.dead` for the poison messages; deleted with the rest.
    with scratch_exchange("bench-facts", extra_queues=(".dead",)) as (channel, name):
        bodies = messages(args.orders)
        for body in bodies:
            channel.basic_publish(name, "PaymentSucceeded", body,
                                  properties=pika.BasicProperties(delivery_mode=2))
        started = time.monotonic()
        call_command("consume_facts", "--once", "--client", "bench-orders", "--exchange", name,
                     "--queue", name, "--prefetch", str(args.prefetch))
        elapsed = time.monotonic() - started
        dead = channel.queue_declare(f"{name}.dead", passive=True).method.message_count
    # --once waits IDLE_SECONDS on the empty queue before it stops; that is not work.
    from operations.facts_consumer import IDLE_SECONDS

    working = elapsed - IDLE_SECONDS
    print(f"consume_facts --once: {len(bodies)} messages in {working:.2f}s = "
          f"{len(bodies) / working:.0f} messages/s ({dead} dead-lettered)")


def main() -> None:
    args = parse_args()
    with throwaway_database(args.db_name):
        bench(args)
    print(f"load average {load_average()} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

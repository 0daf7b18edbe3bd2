"""Benchmark the outbox backlog behind a frozen relay: what a second relay still publishes.

Rerun (PostgreSQL and the RabbitMQ at BROKER_URL, default amqp://guest:guest@127.0.0.1:5672/):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_frozen_relay.py --hot 10 --rounds 40

It creates a throwaway database (`coupon_bench_frozen_relay` unless --db-name) and a scratch
exchange, and drops both at the end. Per claim strategy: relay A claims a batch holding the
first events of `--hot` coupons, publishes one and freezes (its transaction open, as a relay
stopped by SIGSTOP or on a vanished host). Then `--rounds` rounds each add one LOCK and RELEASE
to every hot coupon and ISSUE, LOCK, REDEEM for a fresh coupon, and relay B (batch 200) runs a
batch after each round. Printed: what B published, and the backlog left, of the hot coupons
and of the others. The baseline ("id window") is the claim before whole-coupon claims: the
first unpublished rows in id order, SKIP LOCKED, which A's hot coupons' later rows fill.
"""

import argparse
import os
import threading
import time
from decimal import Decimal

from bench_setup import load_average, scratch_exchange, throwaway_database


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hot", type=int, default=10, help="coupons the frozen relay holds")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--db-name", default="coupon_bench_frozen_relay",
                        help="throwaway PostgreSQL database, created and dropped by this script")
    return parser.parse_args()


def relays():
    from operations.relay import Relay

    class IdWindowRelay(Relay):
        """The claim before whole-coupon claims, kept here as the baseline."""

        def _claim(self):
            from coupons.models import OutboxEvent

            return list(OutboxEvent.objects.filter(published_at__isnull=True).order_by("id")
                        .select_for_update(skip_locked=True, of=("self",))[: self.batch_size])

    return {"id window (before)": IdWindowRelay, "whole coupons (now)": Relay}


def run(relay_class, exchange, args) -> dict:
    from django.db import connection

    from coupons.models import OutboxEvent
    from coupons.services import (
        CommandContext,
        LeaseProof,
        coupon_issue,
        coupon_lock,
        coupon_redeem,
        coupon_release,
        template_create,
    )

    ctx = CommandContext(actor="bench")
    template = template_create(code=f"b{time.monotonic_ns()}", name="bench", kind="AMOUNT_OFF",
                               face_value=Decimal("10.00"), min_order_amount=Decimal("0"),
                               valid_days=30)

    def lease(coupon, order_id):
        locked = coupon_lock(coupon_id=coupon.pk, order_id=order_id, user_id=coupon.user_id,
                             order_amount=Decimal("50.00"), ctx=ctx)
        return LeaseProof.from_token(order_id=order_id, lock_token=locked.lock_token,
                                     expected_version=locked.state_version)

    OutboxEvent.objects.filter(published_at__isnull=True).update(published_at=ctx_now())
    hot = [coupon_issue(template_id=template.pk, user_id=f"h{n}", ctx=ctx).coupon
           for n in range(args.hot)]
    frozen, thaw = threading.Event(), threading.Event()

    def freeze(relay, event):
        frozen.set()
        thaw.wait(600)

    def frozen_relay():
        try:
            relay_class(exchange=exchange, batch_size=args.hot, on_published=freeze).run_batch()
        finally:
            connection.close()

    thread = threading.Thread(target=frozen_relay)
    thread.start()
    frozen.wait(60)
    second = relay_class(exchange=exchange, batch_size=200)
    published, others = 0, []
    try:
        for n in range(args.rounds):
            for coupon in hot:
                proof = lease(coupon, f"o{coupon.pk}-{n}")
                coupon_release(coupon_id=coupon.pk, lease=proof, reason="closed", ctx=ctx)
            fresh = coupon_issue(template_id=template.pk, user_id=f"f{n}", ctx=ctx).coupon
            others.append(fresh.pk)
            coupon_redeem(coupon_id=fresh.pk, lease=lease(fresh, f"f{n}"), payment_id=f"p{n}",
                          ctx=ctx)
            published += second.run_batch().published
        unpublished = OutboxEvent.objects.filter(published_at__isnull=True)
        result = {"published by B": published,
                  "backlog, hot coupons": unpublished.filter(
                      coupon_id__in=[c.pk for c in hot]).count(),
                  "backlog, other coupons": unpublished.filter(coupon_id__in=others).count(),
                  "other coupons' events": 3 * len(others)}
    finally:
        thaw.set()
        thread.join(60)
        second.close()
    while second.run_batch().published:  # what is left, so the next strategy starts clean
        pass
    second.close()
    return result


def ctx_now():
    from coupons import clock

    return clock.now()


def main() -> None:
    args = parse_args()
    with (throwaway_database(args.db_name),
          scratch_exchange("bench-frozen-relay") as (_channel, exchange)):
        results = {name: run(relay_class, exchange, args)
                   for name, relay_class in relays().items()}
    for name, result in results.items():
        print(f"{name}: " + ", ".join(f"{key} {value}" for key, value in result.items()))
    before, now = (r["backlog, other coupons"] for r in results.values())
    print(f"other coupons' backlog behind the frozen relay: {before} before, {now} now "
          f"({args.hot} hot coupons, {args.rounds} rounds)")
    print(f"load average {load_average()} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

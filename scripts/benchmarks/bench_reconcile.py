"""Benchmark reconciliation: time and peak memory of `manage.py reconcile` as coupons grow.

Rerun (PostgreSQL, the real target; about five minutes on a 2-core machine, most of it loading):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_reconcile.py  # 10,000 then 100,000 coupons
    .venv/bin/python scripts/benchmarks/bench_reconcile.py --smoke  # 1,000 then 2,000, seconds

Like bench_scan_leases.py it never touches the database DATABASE_URL names: it creates a
throwaway one (`coupon_bench_reconcile`), migrates it and drops it at the end; without
DATABASE_URL, on the checkout's embedded PostgreSQL.

The coupons are bulk-loaded (not run through the services: loading 100,000 histories command by
command would take most of an hour), as four honest histories in turn: issued; locked, paid and
redeemed; locked and still leased; locked and released after the order closed. Every 1,000th
leased coupon also gets a payment its handler never followed, so each run records findings.
At each size the run is timed on its own, then run again under tracemalloc for its peak Python
memory (tracemalloc slows it): the peak stays flat while the coupons grow tenfold, because a run
holds one batch (RECONCILE_BATCH_SIZE) at a time.
"""

import argparse
import io
import os
import sys
import time
import tracemalloc
import uuid
from datetime import timedelta
from decimal import Decimal

from bench_setup import load_average, throwaway_database

CHUNK = 2000  # coupons bulk-loaded per transaction
FAULT_EVERY = 1000  # one leased coupon in this many has an unfollowed payment


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000],
                        help="coupon counts to reconcile at, ascending")
    parser.add_argument("--smoke", action="store_true", help="1,000 and 2,000: seconds")
    parser.add_argument("--batch", type=int, default=None,
                        help="coupons per reconciliation batch (default: the setting)")
    parser.add_argument("--db-name", default="coupon_bench_reconcile")
    args = parser.parse_args()
    if args.smoke:
        args.sizes = [1_000, 2_000]
    if sorted(args.sizes) != args.sizes or args.sizes[0] < 1:
        parser.error("--sizes must be positive and ascending")
    return args


# --- the data ----------------------------------------------------------------------------


def load(first: int, last: int, template, now) -> None:
    """Coupons number first..last-1, each one of the four histories by its number."""
    for start in range(first, last, CHUNK):
        load_chunk(range(start, min(start + CHUNK, last)), template, now)


def load_chunk(numbers: range, template, now) -> None:
    from django.db import connection, transaction

    from coupons.models import (
        CouponLock,
        CouponOperation,
        InboxMessage,
        OrderCoupon,
        OrderFact,
        Redemption,
        UserCoupon,
    )
    from coupons.write.declared import declare

    version = template.versions.order_by("-id").first()
    valid_until = now + timedelta(days=30)
    with transaction.atomic():
        # The database journals every evidence row as it is loaded, by this actor.
        declare(actor="bench")
        coupons = UserCoupon.objects.bulk_create([
            UserCoupon(user_id=f"u{i}", template=template, template_version=version,
                       status="AVAILABLE", state_version=1, valid_from=now,
                       valid_until=valid_until, issued_at=now, updated_at=now)
            for i in numbers
        ])
        ops, locks, bindings, redemptions, facts = [], [], [], [], []

        def op(coupon, op_type, from_state, to_state, to_version, **fields):
            ops.append(CouponOperation(
                coupon=coupon, op_type=op_type, from_state=from_state, to_state=to_state,
                from_version=to_version - 1, to_version=to_version, actor="bench",
                created_at=now, **fields))

        for i, coupon in zip(numbers, coupons, strict=True):
            op(coupon, "ISSUE", "", "AVAILABLE", 1)
            history = i % 4
            if history == 0:
                continue
            order = f"order-{i}"
            lock = CouponLock(id=uuid.uuid4(), coupon=coupon, order_id=order,
                              token_hash="0" * 64, token_key_id="k1", locked_at=now,
                              expires_at=now + timedelta(minutes=15), acquired_version=2)
            locks.append(lock)
            bindings.append(OrderCoupon(lock=lock, coupon=coupon, order_id=order,
                                        order_amount=Decimal("300.00"),
                                        discount_amount=Decimal("30.00"),
                                        template_version=version, created_at=now))
            op(coupon, "LOCK", "AVAILABLE", "LOCKED", 2, order_id=order, lock=lock)
            if history == 1:  # paid and redeemed
                lock.status, lock.ended_at = "CONSUMED", now
                coupon.status, coupon.state_version = "USED", 3
                redemptions.append(Redemption(coupon=coupon, lock=lock, order_id=order,
                                              payment_id=f"pay-{i}",
                                              discount_amount=Decimal("30.00"), created_at=now))
                op(coupon, "REDEEM", "LOCKED", "USED", 3, order_id=order, lock=lock,
                   payment_id=f"pay-{i}")
                facts.append((order, "PaymentSucceeded", f"pay-{i}"))
            elif history == 2:  # still leased; now and then paid without its redeem
                coupon.status, coupon.state_version = "LOCKED", 2
                if i % FAULT_EVERY == 2:
                    facts.append((order, "PaymentSucceeded", f"pay-{i}"))
            else:  # the order closed, the lease was released
                lock.status, lock.ended_at = "RELEASED", now
                coupon.state_version = 3
                op(coupon, "RELEASE", "LOCKED", "AVAILABLE", 3, order_id=order, lock=lock)
                facts.append((order, "OrderClosed", ""))
        CouponLock.objects.bulk_create(locks)
        OrderCoupon.objects.bulk_create(bindings)
        Redemption.objects.bulk_create(redemptions)
        CouponOperation.objects.bulk_create(ops)
        messages = InboxMessage.objects.bulk_create([
            InboxMessage(message_id=f"m-{order}-{fact_type}", fact_type=fact_type,
                         order_id=order, occurred_at=now, payload={"order_id": order},
                         sender="bench", sender_scope="client:0", content_hash="0" * 64,
                         received_at=now, outcome={"action": "BENCH"})
            for order, fact_type, _ in facts
        ])
        OrderFact.objects.bulk_create([
            OrderFact(order_id=order, fact_type=fact_type, payment_id=payment,
                      occurred_at=now, payload={"order_id": order}, first_message=message,
                      recorded_at=now)
            for (order, fact_type, payment), message in zip(facts, messages, strict=True)
        ])
        # Straight to their final state, versions ahead (a bulk load): past the state trigger,
        # which lets a coupon move one version per UPDATE (coupons/models/state_moves.py).
        with connection.cursor() as cursor:
            cursor.execute("SET session_replication_role = replica")
        try:
            UserCoupon.objects.bulk_update(
                [c for c in coupons if c.state_version > 1 and c.status != "LOCKED"],
                ["status", "state_version"])
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SET session_replication_role = origin")
        # Leased coupons take status and binding together (the CHECK constraint wants both),
        # from the lock rows just written: one statement per chunk.
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE coupons_usercoupon SET status = 'LOCKED', state_version = 2, "
                "current_lock_id = l.id, "
                "locked_order_id = l.order_id, lock_token_hash = l.token_hash, "
                "lock_expires_at = l.expires_at FROM coupons_couponlock l "
                "WHERE l.coupon_id = coupons_usercoupon.id AND l.status = 'ACTIVE' "
                "AND coupons_usercoupon.id BETWEEN %s AND %s",
                [coupons[0].pk, coupons[-1].pk],
            )


# --- the runs ----------------------------------------------------------------------------


def reconcile(batch):
    from operations.reconcile import reconcile_run

    started = time.monotonic()
    run = reconcile_run(actor="bench", batch_size=batch)
    return run, time.monotonic() - started


def bench(args) -> None:
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from coupons.clock import FrozenClock, use_clock
    from coupons.models import Finding
    from coupons.services import template_create

    print(f"database: {connection.settings_dict['NAME']}, created for this run and dropped "
          "after it")
    batch = args.batch or settings.COUPONS["RECONCILE_BATCH_SIZE"]
    now = timezone.now().replace(microsecond=0)
    loaded = 0
    call_command("setup_db_roles", stdout=io.StringIO())  # the journal's triggers
    with use_clock(FrozenClock(now)):
        template = template_create(
            code="bench", name="bench 30 off", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
            min_order_amount=Decimal("0.00"), valid_days=30,
        )
        for size in args.sizes:
            started = time.monotonic()
            load(loaded, size, template, now)
            print(f"loaded {size - loaded:,} coupons in {time.monotonic() - started:.1f}s")
            loaded = size
            run, seconds = reconcile(batch)
            tracemalloc.start()
            again, traced_seconds = reconcile(batch)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            faults = Finding.objects.filter(status="OPEN").count()
            print(f"{size:>9,} coupons: reconcile {seconds:.1f}s "
                  f"({size / seconds:,.0f} coupons/s, batch {batch}); "
                  f"peak Python memory {peak / 2**20:.1f} MiB (traced run {traced_seconds:.1f}s); "
                  f"new {run.found_new}, then {again.still_open} still open, "
                  f"{again.found_new} new on the rerun; {faults} open findings")
            expected = sum(1 for i in range(size) if i % 4 == 2 and i % FAULT_EVERY == 2)
            if faults != expected or again.found_new:
                sys.exit(f"expected {expected} open findings and none new on the rerun")


def main() -> None:
    args = parse_args()
    started = time.monotonic()
    with throwaway_database(args.db_name):
        bench(args)
    print(f"total {time.monotonic() - started:.0f}s; load average {load_average()} "
          f"on {os.cpu_count()} CPUs (other work on the machine moves these figures)")


if __name__ == "__main__":
    main()

"""Benchmark the lease scanner: expired leases released per second.

Rerun (PostgreSQL, the real target; under two minutes on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_scan_leases.py --leases 2000

Without DATABASE_URL it runs on the checkout's embedded PostgreSQL cluster.

The benchmark never touches the database DATABASE_URL names: it connects to that
server's `postgres` database, creates a throwaway database (`coupon_bench` unless --db-name),
migrates it, and drops it at the end. It issues N coupons, and before each run locks all of
them through the services (two setup processes) and moves a frozen clock past their leases, so
every run releases the same N expired leases:

  (a) scanner   operations.scanners.scan_leases(batch=100): keyset batches, one transaction per
                batch, FOR NO KEY UPDATE SKIP LOCKED, a payment check per lease;
  (b) baseline  the naive loop: read the due coupons, then coupon_release() one by one, one
                transaction per lease, no batching and no SKIP LOCKED;
  (c) parallel  two scanner processes at once over one set (SKIP LOCKED splits the rows).
"""

import argparse
import multiprocessing
import os
import sys
import time
from decimal import Decimal

from bench_setup import load_average, throwaway_database

SETUP_CHUNK = 250  # coupons issued or locked per setup transaction
LEASE = 60  # seconds


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leases", type=int, default=2000, help="expired leases per run (N)")
    parser.add_argument("--batch", type=int, default=100, help="scanner batch size")
    parser.add_argument("--db-name", default="coupon_bench",
                        help="throwaway PostgreSQL database, created and dropped by this script")
    args = parser.parse_args()
    if args.leases < 1 or args.batch < 1:
        parser.error("--leases and --batch must be at least 1")
    return args


# --- the data ----------------------------------------------------------------------------


def _issue_part(part, parts, template_id, n):
    from django.db import transaction

    from coupons.services import CommandContext, coupon_issue

    ctx = CommandContext(actor="bench")
    mine = range(part, n, parts)
    for start in range(0, len(mine), SETUP_CHUNK):
        with transaction.atomic():
            for i in mine[start:start + SETUP_CHUNK]:
                coupon_issue(template_id=template_id, user_id=f"u{i}", ctx=ctx)


def _lock_part(part, parts, round_name, lease_seconds):
    """Lock this part's share of the AVAILABLE coupons, each for its own order."""
    from django.db import transaction

    from coupons.models import UserCoupon
    from coupons.services import CommandContext, coupon_lock

    ctx = CommandContext(actor="bench")
    coupons = list(UserCoupon.objects.filter(status="AVAILABLE").order_by("id")
                   .values_list("pk", "user_id"))[part::parts]
    for start in range(0, len(coupons), SETUP_CHUNK):
        # Several commands per transaction only to make the setup quick; each is still the
        # service's own atomic block (a savepoint here).
        with transaction.atomic():
            for coupon_id, user_id in coupons[start:start + SETUP_CHUNK]:
                coupon_lock(coupon_id=coupon_id, order_id=f"{round_name}-{coupon_id}",
                            user_id=user_id, order_amount=Decimal("300.00"),
                            lease_seconds=lease_seconds, ctx=ctx)


def _setup_process(target, part, parts, args):
    from django.db import connections

    try:
        target(part, parts, *args)
    finally:
        connections.close_all()


def in_setup_processes(target, *args, parts=2) -> float:
    """Run target(part, parts, *args) in `parts` forked processes (they share the frozen
    clock); answers the seconds taken. The setup issues and locks through the services, three
    commands' worth of queries per lease, so it is most of the run."""
    from django.db import connections

    started = time.monotonic()
    connections.close_all()  # no connection may cross a fork
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_setup_process, args=(target, part, parts, args))
                 for part in range(parts)]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
        if process.exitcode != 0:
            sys.exit(f"a setup process failed with exit code {process.exitcode}")
    return time.monotonic() - started


# --- the three ways to release -----------------------------------------------------------


def run_scanner(batch: int) -> tuple[dict, float]:
    from operations.scanners import scan_leases

    started = time.monotonic()
    report = scan_leases(batch=batch)
    return dict(report.counts), time.monotonic() - started


def run_baseline() -> tuple[dict, float]:
    """One transaction per lease: no batch, no SKIP LOCKED, no keyset cursor."""
    from coupons import clock
    from coupons.errors import CouponError
    from coupons.models import CouponStatus, UserCoupon
    from coupons.services import CommandContext, LeaseProof, coupon_release

    ctx = CommandContext(actor="bench:naive-loop")
    counts = {"released": 0, "skipped": 0}
    started = time.monotonic()
    due = (UserCoupon.objects.select_related("current_lock")
           .filter(status=CouponStatus.LOCKED, lock_expires_at__lte=clock.now())
           .order_by("lock_expires_at", "id"))
    for coupon in list(due):
        lease = LeaseProof.from_lock(coupon.current_lock, expected_version=coupon.state_version)
        try:
            coupon_release(coupon_id=coupon.pk, lease=lease, ctx=ctx, reason="lease expired")
            counts["released"] += 1
        except CouponError:
            counts["skipped"] += 1
    return counts, time.monotonic() - started


def _scanner_process(batch, start_line, results):
    from django.db import connections

    start_line.wait()
    started = time.monotonic()
    counts, _ = run_scanner(batch)
    results.put((counts, started, time.monotonic()))
    connections.close_all()


def run_parallel(batch: int, workers: int = 2) -> tuple[dict, float]:
    """`workers` scanner processes (forked, so they share the frozen clock) released together."""
    from django.db import connections

    connections.close_all()  # no connection may cross a fork
    context = multiprocessing.get_context("fork")
    start_line, results = context.Barrier(workers), context.Queue()
    processes = [context.Process(target=_scanner_process, args=(batch, start_line, results))
                 for _ in range(workers)]
    for process in processes:
        process.start()
    finished = [results.get(timeout=600) for _ in processes]
    for process in processes:
        process.join()
        if process.exitcode != 0:
            sys.exit(f"a scanner process failed with exit code {process.exitcode}")
    counts = {}
    for worker_counts, _, _ in finished:
        for outcome, n in worker_counts.items():
            counts[outcome] = counts.get(outcome, 0) + n
    wall = max(end for *_, end in finished) - min(start for _, start, _ in finished)
    counts["per_process"] = [c.get("released", 0) for c, _, _ in finished]
    return counts, wall


# --- the run -----------------------------------------------------------------------------


def check_all_released(label: str, n: int) -> None:
    from coupons.models import CouponLock, CouponOperation, LockStatus

    orders = CouponLock.objects.filter(order_id__startswith=f"{label}-")
    still_active = orders.filter(status=LockStatus.ACTIVE).count()
    releases = CouponOperation.objects.filter(op_type="RELEASE",
                                              lock__in=orders.values("pk")).count()
    if still_active or releases != n:
        sys.exit(f"{label}: {releases} releases for {n} leases, {still_active} still active")


def bench(args) -> None:
    from django.db import connection
    from django.utils import timezone

    from coupons.clock import FrozenClock, use_clock
    from coupons.services import template_create

    n = args.leases
    print(f"database: {connection.settings_dict['NAME']}, created for this run and dropped "
          "after it")
    start_time = timezone.now().replace(microsecond=0)
    with use_clock(FrozenClock(start_time)) as clock:
        template = template_create(
            code="bench", name="bench 30 off", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
            min_order_amount=Decimal("0.00"), valid_days=30,
        )
        setup_seconds = in_setup_processes(_issue_part, template.pk, n)
        # The same N coupons serve every run: locked for round r's orders, released by it.
        rates = {}
        for label in ("scanner", "baseline", "parallel"):
            setup_seconds += in_setup_processes(_lock_part, label, LEASE)
            clock.advance(seconds=LEASE + 1)
            if label == "scanner":
                counts, seconds = run_scanner(args.batch)
            elif label == "baseline":
                counts, seconds = run_baseline()
            else:
                counts, seconds = run_parallel(args.batch)
            check_all_released(label, n)
            rates[label] = counts["released"] / seconds
            print(f"{label:>9}: {counts['released']} released in {seconds:.2f}s = "
                  f"{rates[label]:.0f} leases/s  {describe(label, args.batch, counts)}")
        print(f"    setup: {n} coupons issued, locked 3 times through the services, "
              f"in {setup_seconds:.1f}s")

    print(f"ratio scanner/baseline: {rates['scanner'] / rates['baseline']:.2f}x; "
          f"parallel/scanner: {rates['parallel'] / rates['scanner']:.2f}x")


def describe(label: str, batch: int, counts: dict) -> str:
    if label == "scanner":
        return f"(batch {batch}, one transaction per batch)"
    if label == "baseline":
        return "(one transaction per lease)"
    split = " + ".join(str(n) for n in counts["per_process"])
    return f"(2 processes, batch {batch}: {split}; skipped {counts.get('skipped', 0)})"


def main() -> None:
    args = parse_args()
    started = time.monotonic()
    with throwaway_database(args.db_name):
        bench(args)
    print(f"total {time.monotonic() - started:.0f}s; load average {load_average()} "
          f"on {os.cpu_count()} CPUs (other work on the machine moves these figures)")


if __name__ == "__main__":
    main()

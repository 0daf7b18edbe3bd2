"""Benchmark the console's GET pages on a coupon with a long history: SQL queries and render time.

Rerun (PostgreSQL, the real target; about a minute on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/bench_console_pages.py --ledger-rows 1000

Without DATABASE_URL (or with a sqlite:// one) it runs on a temporary SQLite file instead.
`--smoke` is a quick check that every page answers (a short history, one run each).

The benchmark never touches the database DATABASE_URL names: on PostgreSQL it creates a
throwaway database (`coupon_bench_console` unless --db-name), migrates it and drops it at the
end. It builds one coupon through the services with --ledger-rows ledger rows (orders that
close, orders paid and refunded, late redeems refused: tests/console/history.py), signs in a
support user with Django's test client, and for each console page prints the SQL queries one
request makes and the median time of --runs requests (the first, warming caches, not counted).
"""

import argparse
import logging
import os
import statistics
import sys
import time
import warnings
from urllib.parse import urlsplit

import bench_setup
from bench_setup import load_average, throwaway_database


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ledger-rows", type=int, default=1000,
                        help="ledger rows of the benchmark coupon, ISSUE included")
    parser.add_argument("--runs", type=int, default=7, help="timed requests per page")
    parser.add_argument("--smoke", action="store_true",
                        help="40 ledger rows, one run per page: does every page answer?")
    parser.add_argument("--db-name", default="coupon_bench_console",
                        help="throwaway PostgreSQL database, created and dropped by this script")
    args = parser.parse_args()
    if args.smoke:
        args.ledger_rows, args.runs = 40, 1
    if args.ledger_rows < 2 or args.runs < 1:
        parser.error("--ledger-rows must be at least 2 and --runs at least 1")
    return args


# --- a database of our own ---------------------------------------------------------------


def setup_django(database_url: str) -> None:
    # The test settings: test-only secrets and plain HTTP for the test client.
    bench_setup.setup_django(database_url, settings_module="config.test_settings")
    # No collectstatic here, and a 404 is reported in the table, not as a log line.
    warnings.filterwarnings("ignore", message="No directory at")
    logging.getLogger("django.request").setLevel(logging.ERROR)


# --- the data ----------------------------------------------------------------------------


def build_coupon(ledger_rows: int):
    """One coupon with `ledger_rows` ledger rows, made through the services on a frozen clock."""
    from datetime import UTC, datetime
    from decimal import Decimal

    from coupons.clock import FrozenClock, use_clock
    from coupons.services import CommandContext, coupon_issue, template_create
    from tests.console.history import long_history

    with use_clock(FrozenClock(datetime(2026, 6, 1, 12, 0, tzinfo=UTC))) as clock:
        template = template_create(
            code="bench", name="30 off 200", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
            min_order_amount=Decimal("200.00"), valid_days=3650)
        coupon = coupon_issue(template_id=template.pk, user_id="u-bench",
                              ctx=CommandContext(actor="bench")).coupon
        return long_history(coupon, clock, ledger_rows=ledger_rows)


def support_client():
    from django.contrib.auth.models import Group, User
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections
    from django.test import Client

    # Keep one connection across requests, as the test runner does (and as the server's pool
    # does): otherwise each request reconnects and the query log starts over.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)

    user = User.objects.create_user("bench-support")
    user.groups.add(Group.objects.get(name="support"))
    client = Client()
    client.force_login(user)
    return client


def pages(coupon) -> list[tuple[str, str, dict]]:
    """(label, path, headers) of every console GET page this script can reach."""
    from coupons.models import CouponOperation

    base = f"/coupons/{coupon.pk}/"
    some_order = CouponOperation.objects.filter(coupon=coupon).exclude(order_id="") \
        .order_by("to_version").values_list("order_id", flat=True).first()
    htmx = {"HTTP_HX_REQUEST": "true"}
    return [
        ("coupon page (latest entries)", base, {}),
        ("coupon page, first ledger page", f"{base}?ledger_page=1", {}),
        ("coupon page, from the first entry", f"{base}?from=0-0-0-0", {}),
        ("timeline partial (htmx)", f"{base}timeline/?from=0-0-0-0", htmx),
        ("ledger partial (htmx)", f"{base}ledger/?ledger_page=2", htmx),
        ("dashboard", "/", {}),
        ("search by order id", f"/search/?q={some_order}", {}),
    ]


def measure(client, path: str, headers: dict, runs: int) -> tuple[int, int, float]:
    """(status, queries of one request, median milliseconds over `runs` requests)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        status = client.get(path, **headers).status_code  # also warms template caches
    count = len(queries)  # now: the next request empties the connection's query log
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        client.get(path, **headers)
        times.append((time.perf_counter() - started) * 1000)
    return status, count, statistics.median(times)


def unmeasured_console_urls(measured: list[str]) -> list[str]:
    """Console URLs this script does not open (they need ids it does not make)."""
    from django.urls import URLPattern, get_resolver, resolve

    covered = set()
    for path in measured:
        try:
            covered.add(resolve(urlsplit(path).path).url_name)
        except Exception:  # noqa: BLE001 - a 404 path is reported by its status instead
            continue
    namespace = get_resolver().namespace_dict["console"][1]
    return sorted(p.name for p in namespace.url_patterns
                  if isinstance(p, URLPattern) and p.name not in covered
                  and p.name not in {"login", "logout"})


def bench(args, vendor: str) -> bool:
    from django.db import connection

    started = time.monotonic()
    coupon = build_coupon(args.ledger_rows)
    client = support_client()
    print(f"{vendor}: coupon {coupon.pk} with {coupon.state_version} ledger rows, built through "
          f"the services in {time.monotonic() - started:.1f}s")
    print(f"{'page':36} {'status':>6} {'queries':>8} {'median ms':>10}  path")
    ok = True
    listed = pages(coupon)
    for label, path, headers in listed:
        status, queries, median = measure(client, path, headers, args.runs)
        note = "" if status == 200 else "  (not routed in this checkout)" if status == 404 else ""
        ok = ok and status in (200, 404)
        print(f"{label:36} {status:>6} {queries:>8} {median:>10.1f}  {path}{note}")
    missing = unmeasured_console_urls([path for _, path, _ in listed])
    if missing:
        print(f"console GET URLs not measured here (need other ids): {', '.join(missing)}")
    print(f"({args.runs} timed runs per page after one warm-up; {connection.vendor}; "
          f"load average {load_average()} on {os.cpu_count()} CPUs)")
    return ok


def main() -> None:
    args = parse_args()
    with throwaway_database(args.db_name, setup_django) as vendor:
        ok = bench(args, {
            "postgresql": "PostgreSQL (a database created for this run)",
            "sqlite": "SQLite (a temporary file; set DATABASE_URL=postgres://... for the real "
                      "figures)",
        }[vendor])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

"""Benchmark the console's GET pages and the per-coupon check on coupons with long histories.

Rerun (PostgreSQL, the real target; a few minutes on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        nice .venv/bin/python scripts/benchmarks/bench_console_pages.py --ledger-rows 21 1001 20001

Without DATABASE_URL it runs on the checkout's embedded PostgreSQL cluster (bench_setup.py).
`--smoke` is a quick check that every page answers (a short history, one run each).

The benchmark never touches the database DATABASE_URL names: on PostgreSQL it creates a
throwaway database (`coupon_bench_console` unless --db-name), migrates it and drops it at the
end. For each --ledger-rows it builds one coupon with that many ledger rows: up to 2,000
through the services (orders that close, orders paid and refunded, late redeems refused:
tests/timeline/history.py), beyond that the first 1,000 so and the rest as lease after lease
written in bulk, journaled as the services would. It signs in a support user with
Django's test client (and a service client for the API), and for each page prints the SQL
queries one request makes, the p50 and p99 wall-clock milliseconds and the median CPU
milliseconds of --runs requests (the first, warming caches, not counted), and the Python
function calls of one more request (cProfile's count, which load does not move: compare two
runs by it). At the end, one table of every page at every history length (page, ledger rows,
queries, p50, p99, calls) with the load average beside it.

The coupon page and GET /check are measured twice on each coupon, once a signed head covers its
history (`sequence_journal` and `ledger_checkpoint`, as cron runs them): "full" removes the
check's watermark before every request, so each one re-reads and folds the whole ledger
(what every view did before coupons/evidence/check_watermark.py, and what every view does while
no verified head covers the rows); "incremental" is the page as it runs, the check resuming
after the version the previous one verified, which rests on that head. `--history-only` skips
the other pages. The ratio is full / incremental. Targets: <=
50 ms and <= 12 queries at 1,000 and at 20,000 rows.
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
    parser.add_argument("--ledger-rows", type=int, nargs="+", default=[21, 1001, 20001],
                        help="ledger rows of each benchmark coupon, ISSUE included")
    parser.add_argument("--runs", type=int, default=21, help="timed requests per page")
    parser.add_argument("--full-runs", type=int, default=3,
                        help="timed requests of the full checks (seconds each at 20,000 rows)")
    parser.add_argument("--history-only", action="store_true",
                        help="only the coupon page and GET /check, full and incremental")
    parser.add_argument("--smoke", action="store_true",
                        help="40 ledger rows, one run per page: does every page answer?")
    parser.add_argument("--db-name", default="coupon_bench_console",
                        help="throwaway PostgreSQL database, created and dropped by this script")
    args = parser.parse_args()
    if args.smoke:
        args.ledger_rows, args.runs, args.full_runs = [41], 1, 1
    if min(args.ledger_rows) < 2 or args.runs < 1:
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


THROUGH_SERVICES = 2000  # beyond this, the history is written in bulk (minutes otherwise)


def build_coupon(ledger_rows: int, n: int):
    """One coupon with `ledger_rows` ledger rows on a frozen clock: through the services up to
    THROUGH_SERVICES, then (the first 1,001 so) lease after lease in bulk."""
    from datetime import UTC, datetime
    from decimal import Decimal

    from django.db import connection

    from coupons.clock import FrozenClock, use_clock
    from coupons.services import CommandContext, coupon_issue, template_create
    from tests.timeline.history import bulk_history, long_history

    with use_clock(FrozenClock(datetime(2026, 6, 1, 12, 0, tzinfo=UTC))) as clock:
        template = template_create(
            code=f"bench-{n}", name="30 off 200", kind="AMOUNT_OFF",
            face_value=Decimal("30.00"), min_order_amount=Decimal("200.00"), valid_days=3650)
        coupon = coupon_issue(template_id=template.pk, user_id=f"u-bench-{n}",
                              ctx=CommandContext(actor="bench")).coupon
        if ledger_rows <= THROUGH_SERVICES:
            return long_history(coupon, clock, ledger_rows=ledger_rows)
        coupon = long_history(coupon, clock, ledger_rows=1001)
        coupon = bulk_history(coupon, clock, ledger_rows=ledger_rows - (ledger_rows - 1001) % 2)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as autovacuum would, after a bulk load
    return coupon


def sign_head() -> None:
    """What cron runs: positions for the new journal entries, then a signed head over them
    (the test settings' signing key and scratch directory)."""
    from io import StringIO

    from django.core.management import call_command

    call_command("setup_db_roles", stdout=StringIO())  # the sequencer function
    call_command("sequence_journal", stdout=StringIO())
    call_command("ledger_checkpoint", stdout=StringIO())


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


def api_client():
    from rest_framework.test import APIClient

    from coupons.capabilities import CLIENT_GRANTS
    from coupons.services.clients import service_client_create

    _, key = service_client_create(name="bench-reader", capabilities=CLIENT_GRANTS.values())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
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
        ("conflict cases queue", "/cases/", {}),
        ("approvals queue", "/approvals/", {}),
        ("compensations queue", "/compensations/", {}),
    ]


def measure(client, path: str, headers: dict, runs: int, before=None):
    """(status, queries of one request, p50 and p99 wall ms, median CPU ms over `runs`
    requests, the Python function calls of one more request);
    `before()` runs ahead of each request, outside the timing. The calls are cProfile's
    count, which the machine's load does not move: the figure to compare between two runs."""
    import cProfile
    import pstats

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    before = before or (lambda: None)
    before()
    with CaptureQueriesContext(connection) as queries:
        status = client.get(path, **headers).status_code  # also warms template caches
    count = len(queries)  # now: the next request empties the connection's query log
    wall, cpu = [], []
    for _ in range(runs):
        before()
        started, started_cpu = time.perf_counter(), time.process_time()
        client.get(path, **headers)
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    before()
    profile = cProfile.Profile()
    profile.runcall(client.get, path, **headers)
    return (status, count, statistics.median(wall), percentile(wall, 99), statistics.median(cpu),
            pstats.Stats(profile).total_calls)


def percentile(values: list[float], p: int) -> float:
    """The nearest-rank percentile: with 21 runs, p99 is the slowest one."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, -(-p * len(ordered) // 100) - 1)]


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


ANSWERS = (200, 302, 404)  # 302: a search with one match goes straight to its coupon


def history_figures(coupon, client, api, runs: int, full_runs: int, table: list) -> bool:
    """The coupon page and /check, full and incremental, with the ratio."""
    from coupons.models import CheckWatermark

    def forget():
        CheckWatermark.objects.filter(coupon_id=coupon.pk).delete()

    ok = True
    print(f"{'history page':28} {'check':>11} {'status':>6} {'queries':>8} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'CPU ms':>8} {'calls':>9} {'full/incr':>9}")
    for label, who, path in (("coupon page", client, f"/coupons/{coupon.pk}/"),
                             ("GET /check (API)", api, f"/api/v1/coupons/{coupon.pk}/check")):
        full = measure(who, path, {}, full_runs, before=forget)
        incremental = measure(who, path, {}, runs)
        for how, (status, queries, p50, p99, cpu, calls) in (("full", full),
                                                               ("incremental", incremental)):
            ratio = f"{full[2] / incremental[2]:.1f}x" if how == "incremental" else ""
            print(f"{label:28} {how:>11} {status:>6} {queries:>8} {p50:>8.1f} {p99:>8.1f} "
                  f"{cpu:>8.1f} {calls:>9,} {ratio:>9}")
            table.append((f"{label}, {how}", coupon.state_version, queries, p50, p99, calls))
            ok = ok and status == 200
    return ok


def bench(args) -> bool:

    client, api = support_client(), api_client()
    ok, table = True, []
    for n, rows in enumerate(args.ledger_rows):
        started = time.monotonic()
        coupon = build_coupon(rows, n)
        built = time.monotonic() - started
        sign_head()
        print(f"\ncoupon {coupon.pk} with {coupon.state_version} ledger rows, built "
              f"in {built:.1f}s and signed in {time.monotonic() - started - built:.1f}s "
              f"(a database created for this run)")
        ok = history_figures(coupon, client, api, args.runs, args.full_runs, table) and ok
        print(f"{'page':36} {'status':>6} {'queries':>8} {'p50 ms':>8} {'p99 ms':>8} "
              f"{'CPU ms':>8} {'calls':>9}  path")
        listed = [] if args.history_only else pages(coupon)
        for label, path, headers in listed:
            status, queries, p50, p99, cpu, calls = measure(client, path, headers, args.runs)
            note = "  (not routed in this checkout)" if status == 404 else ""
            ok = ok and status in ANSWERS
            print(f"{label:36} {status:>6} {queries:>8} {p50:>8.1f} {p99:>8.1f} {cpu:>8.1f} "
                  f"{calls:>9,}  {path}{note}")
            table.append((label, coupon.state_version, queries, p50, p99, calls))
    missing = [] if args.history_only else unmeasured_console_urls(
        [path for _, path, _ in listed])
    if missing:
        print(f"console GET URLs not measured here (need other ids): {', '.join(missing)}")
    print(f"({args.runs} timed runs per page after one warm-up; "
          f"load average {load_average()} on {os.cpu_count()} CPUs)")
    print_table(table)
    return ok


def print_table(table: list) -> None:
    """Every page at every history length, one row each, with the load average now."""
    print(f"\n{'page':40} {'ledger rows':>11} {'queries':>8} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'calls':>9}  load average {load_average()} ({os.cpu_count()} CPUs)")
    for label, rows, queries, p50, p99, calls in sorted(table, key=lambda row: row[:2]):
        print(f"{label:40} {rows:>11,} {queries:>8} {p50:>8.1f} {p99:>8.1f} {calls:>9,}")


def main() -> None:
    args = parse_args()
    with throwaway_database(args.db_name, setup_django):
        ok = bench(args)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

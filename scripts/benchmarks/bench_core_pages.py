"""Benchmark the console's dashboard and search: SQL queries and render time of each page.

Rerun (a throwaway test database on DATABASE_URL's PostgreSQL; seconds):

    .venv/bin/python scripts/benchmarks/bench_core_pages.py --coupons 2000 --runs 20

It runs `seed_demo`, then issues N more coupons to one user through the services (each with
its ISSUE ledger row and outbox event, spread over the last day so the chart has traffic),
signs support in with the test client and GETs the dashboard and four searches, printing each
page's query count and median render time.
"""

import argparse
import statistics
import time

from bench_setup import client_test_databases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coupons", type=int, default=2000, help="extra coupons of one user")
    parser.add_argument("--runs", type=int, default=20, help="GETs per page")
    args = parser.parse_args()
    with client_test_databases():
        run(args)


def run(args):
    from datetime import timedelta
    from io import StringIO

    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from coupons.clock import FrozenClock, use_clock
    from coupons.models import CouponTemplate
    from coupons.services import CommandContext, coupon_issue

    settings.COUPONS_DEMO = True  # a throwaway database: the demo's logins are harmless here
    call_command("seed_demo", stdout=StringIO())
    template = CouponTemplate.objects.get(code="demo-30-off-200")
    now = timezone.now()
    with use_clock(FrozenClock(now - timedelta(hours=23))) as clock:
        step = timedelta(hours=23) / max(args.coupons, 1)
        for _ in range(args.coupons):
            coupon_issue(template_id=template.pk, user_id="bench_user",
                         ctx=CommandContext(actor="bench"))
            clock.advance(seconds=step.total_seconds())

    client = Client()
    client.force_login(User.objects.get(username="support"))
    pages = [
        ("dashboard", "/"),
        ("search: user with many coupons", "/search/?q=bench_user"),
        ("search: released order id (redirect)", "/search/?q=order_demo_A"),
        ("search: filter + sort, no id", "/search/?status=AVAILABLE&sort=-updated&page=3"),
        ("search: unknown id", "/search/?q=nobody_at_all"),
    ]
    print(f"{args.coupons} extra coupons, median of {args.runs} GETs")
    for name, url in pages:
        client.get(url)  # warm caches (templates, session)
        with CaptureQueriesContext(connection) as queries:
            status = client.get(url).status_code
        # Counted now: the next request's start clears the log the capture reads.
        query_count = len(queries)
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            client.get(url)
            times.append(time.perf_counter() - started)
        print(f"  {name:<40} {status}  {query_count:>2} queries  "
              f"{statistics.median(times) * 1000:6.1f} ms")


if __name__ == "__main__":
    main()

"""Benchmark the operators' queue pages: SQL queries and render time of one full page.

Rerun (a throwaway test database on DATABASE_URL's PostgreSQL; seconds):

    .venv/bin/python scripts/benchmarks/bench_queue_pages.py --items 100 --runs 20

It fills each queue with N waiting items through the services (a conflict case from a late
payment, a risk-flagged refund decision, a compensation proposal), signs an operator in with
the test client and GETs /cases/, /approvals/ and /compensations/ (one page of 25 items and
their forms), printing each page's query count and median render time. Also an htmx approval
of one refund decision (the partial with its RETURN row).
"""

import argparse
import statistics
import time

from bench_setup import client_test_databases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100, help="waiting items per queue")
    parser.add_argument("--runs", type=int, default=20, help="GETs per page")
    args = parser.parse_args()
    with client_test_databases():
        run(args)


def run(args):
    from datetime import UTC, datetime
    from decimal import Decimal

    from django.contrib.auth.models import Group, User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from coupons.clock import FrozenClock, use_clock
    from coupons.evidence.tips import journal_tip
    from coupons.services import template_create
    from refunds.models import RefundCoupon
    from tests.timeline import queue_objects as make
    from tests.timeline.queue_helpers import press

    with use_clock(FrozenClock(datetime(2026, 6, 1, 12, tzinfo=UTC))):
        template = template_create(
            code="off30", name="30 off 200", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
            min_order_amount=Decimal("200.00"), valid_days=30)
        decisions = []
        for n in range(args.items):
            decisions.append(make.pending_decision(make.fresh_coupon(template), f"order-R{n}"))
            make.late_payment_case(make.fresh_coupon(template), f"order-A{n}")
            make.proposal(make.fresh_coupon(template), order_id=f"order-C{n}")
        operator = User.objects.create_user("bench-operator")
        operator.groups.add(Group.objects.get(name="operator"))
        client = Client()
        client.force_login(operator)

        print(f"{args.items} waiting items per queue, {args.runs} GETs per page")
        for url in ("/cases/", "/approvals/", "/compensations/"):
            client.get(url)  # warm the template cache
            timings = []
            for _ in range(args.runs):
                with CaptureQueriesContext(connection) as queries:
                    started = time.perf_counter()
                    assert client.get(url).status_code == 200
                    timings.append(time.perf_counter() - started)
            print(f"  GET {url:<16} {len(queries):>2} queries, "
                  f"median {statistics.median(timings) * 1000:.1f} ms")
        shown = journal_tip(RefundCoupon, decisions[0].pk)  # read with the page, not timed
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            answer = press(client, "decision_approve", decision_id=decisions[0].pk,
                           action="RETURN", seen_entry=shown)
            took = time.perf_counter() - started
        assert answer.status_code == 200 and b"RETURN" in answer.content
        print(f"  POST approve (htmx)   {len(queries):>2} queries, {took * 1000:.1f} ms")


if __name__ == "__main__":
    main()

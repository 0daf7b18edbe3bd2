"""Benchmark the console search for a user with very many coupons (issue 16, item 2).

Rerun (PostgreSQL, the real target; a minute or two on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/bench_search.py --coupons 300000

Like the other benchmarks it never touches the database DATABASE_URL names: it creates a
throwaway database (`coupon_bench_search` unless --db-name), migrates it and drops it. One
coupon of user `whale` is issued through the services and copied N times in one INSERT ...
SELECT; then it times `GET /search/?q=whale` (the page a support person sees, through the test
client) and, in the same run, the way search worked before: every matching id loaded, then the
count and the page each sent back as `pk IN (...)`.
"""

import argparse
import os
import time

from bench_setup import ROOT, load_average, throwaway_database

RUNS = 3


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coupons", type=int, default=300_000, help="coupons of user whale")
    parser.add_argument("--db-name", default="coupon_bench_search")
    return parser.parse_args()


def store(n: int) -> None:
    from datetime import UTC, datetime
    from decimal import Decimal

    from django.db import connection

    from coupons.clock import FrozenClock, use_clock
    from coupons.models import UserCoupon
    from coupons.services import CommandContext, coupon_issue, template_create

    with use_clock(FrozenClock(datetime.now(UTC))):
        template = template_create(code="bench", name="bench", kind="AMOUNT_OFF",
                                   face_value=Decimal("30.00"), valid_days=30)
        coupon = coupon_issue(template_id=template.pk, user_id="whale",
                              ctx=CommandContext(actor="bench")).coupon
    table = UserCoupon._meta.db_table
    columns = [f.column for f in UserCoupon._meta.concrete_fields if not f.primary_key]
    select = ", ".join(f"c.{column}" for column in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) SELECT {select} "
            f"FROM {table} c CROSS JOIN generate_series(1, %s) WHERE c.id = %s",
            [n - 1, coupon.pk])
        cursor.execute(f"ANALYZE {table}")


def before_issue_16(text: str) -> int:
    """The old way: every id of the match in Python, then count and page by `pk IN (...)`."""
    from django.core.paginator import Paginator

    from coupons.models import UserCoupon

    ids = list(UserCoupon.objects.filter(user_id=text).values_list("id", flat=True))
    page = Paginator(UserCoupon.objects.filter(pk__in=ids).order_by("id"), 25).page(1)
    return len(list(page)) and page.paginator.count


def best_of(action) -> tuple[float, object]:
    timings, result = [], None
    for _ in range(RUNS):
        began = time.perf_counter()
        result = action()
        timings.append(time.perf_counter() - began)
    return min(timings), result


def bench(args) -> None:
    from django.contrib.auth.models import User
    from django.test import Client

    started = time.monotonic()
    store(args.coupons)
    print(f"stored {args.coupons} coupons of user whale in {time.monotonic() - started:.1f}s")
    browser = Client()
    browser.force_login(User.objects.create_superuser("bench", password="bench-password"))

    def page():
        answer = browser.get("/search/", {"q": "whale"})
        assert answer.status_code == 200, answer.status_code
        assert b"More than 10000 coupons" in answer.content
        return answer

    now, _ = best_of(page)
    then, count = best_of(lambda: before_issue_16("whale"))
    print(f"GET /search/?q=whale now: best of {RUNS} {now * 1000:.0f} ms "
          "(\"More than 10000 coupons\", its first 25 rows, matched by user id)")
    print(f"before issue 16 (ids loaded, count and page by pk IN): best of {RUNS} "
          f"{then * 1000:.0f} ms for {count} coupons")
    print(f"now / before: {now / then:.3f}")


def main() -> None:
    args = parse_args()
    os.chdir(ROOT)
    os.environ["DJANGO_HTTPS"] = "0"  # the test client speaks plain HTTP
    with throwaway_database(args.db_name) as vendor:
        if vendor != "postgresql":
            raise SystemExit("bench_search.py needs a PostgreSQL DATABASE_URL")
        bench(args)
    print(f"load average {load_average()} on {os.cpu_count()} CPUs "
          "(other work on the machine moves these figures)")


if __name__ == "__main__":
    main()

"""Benchmark the console search for a user with very many coupons.

Rerun (PostgreSQL, the real target; a minute or two on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_search.py --coupons 300000

Like the other benchmarks it never touches the database DATABASE_URL names: it creates a
throwaway database (`coupon_bench_search` unless --db-name), migrates it and drops it. One
coupon of user `whale` is issued through the services and copied N times in one INSERT ...
SELECT; then it times `GET /search/?q=whale` (the page a support person sees, through the test
client) and, in the same run, the way search worked before: every matching id loaded, then the
count and the page each sent back as `pk IN (...)`.

With --everyone N it also builds N more coupons, each of its own user
(`User_000042`) with one past lease of its own order (`ORDER_000042`, a random lock id), in one
INSERT ... SELECT each as the database owner, then for what a person types (an order id in
lower case, an order id's beginning, the first 8 characters of a lock id, a user id's beginning,
a template code) times the search page and runs EXPLAIN ANALYZE on every query the page sent,
printing each one's execution time and the indexes it used:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        nice .venv/bin/python scripts/benchmarks/bench_search.py --coupons 1000 --everyone 1000000
"""

import argparse
import os
import re
import time

from bench_setup import ROOT, load_average, throwaway_database

RUNS = 3


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coupons", type=int, default=300_000, help="coupons of user whale")
    parser.add_argument("--everyone", type=int, default=0,
                        help="also N coupons of N users, one lease each, and EXPLAIN ANALYZE "
                             "of the searches a person types")
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
    columns = [f.column for f in UserCoupon._meta.get_fields()
               if f.concrete and not f.many_to_many and not f.primary_key]
    select = ", ".join(f"c.{column}" for column in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) SELECT {select} "
            f"FROM {table} c CROSS JOIN generate_series(1, %s) WHERE c.id = %s",
            [n - 1, coupon.pk])
        cursor.execute(f"ANALYZE {table}")


def store_everyone(n: int) -> dict[str, str]:
    """N coupons of N users, each with one released lease of its own order; answers the texts
    a person would type to find coupon number n // 2."""
    from datetime import UTC, datetime, timedelta
    from decimal import Decimal

    from django.db import connection

    from coupons.models import CouponLock, UserCoupon
    from coupons.services import template_create

    template = template_create(code="SPRING_SALE", name="spring", kind="AMOUNT_OFF",
                               face_value=Decimal("5.00"), valid_days=30)
    version = template.versions.get()
    coupons, locks = UserCoupon._meta.db_table, CouponLock._meta.db_table
    now = datetime.now(UTC)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {coupons} (user_id, template_id, template_version_id, status, "
            "state_version, valid_from, valid_until, issued_at, updated_at) "
            "SELECT 'User_' || lpad(i::text, 6, '0'), %s, %s, 'AVAILABLE', 3, %s, %s, %s, %s "
            "FROM generate_series(1, %s) i",
            [template.pk, version.pk, now, now + timedelta(days=30), now, now, n])
        cursor.execute(
            f"INSERT INTO {locks} (id, coupon_id, order_id, token_hash, token_key_id, status, "
            "locked_at, expires_at, acquired_version, ended_at) "
            "SELECT gen_random_uuid(), c.id, 'ORDER_' || substr(c.user_id, 6), "
            "md5(c.id::text) || md5(c.user_id), 'k1', 'RELEASED', %s, %s, 2, %s "
            f"FROM {coupons} c WHERE c.template_id = %s",
            [now, now + timedelta(minutes=15), now, template.pk])
        # Every table: the planner's idea of the small ones (templates, cases) matters too.
        cursor.execute("ANALYZE")
    middle = f"{n // 2:06d}"
    lock_id = str(CouponLock.objects.get(order_id=f"ORDER_{middle}").pk)
    return {"order id, lower case": f"order_{middle}",
            "order id's beginning": f"order_{middle[:-1]}",
            "lock id's first 8 characters": lock_id[:8],
            "user id's beginning": f"user_{middle[:-1]}",
            "template code": "spring_sale"}


def explain_search(browser, label: str, text: str) -> None:
    """Times the page for `text`, then EXPLAIN ANALYZE of its two coupon queries (the capped
    count and the page) as the ORM sends them, with the indexes each used. (The SQL a test
    client captures is not sent as is: its LIKE escapes would read differently.)"""
    from timeline.search import CappedPaginator, SearchFilters, coupon_search

    elapsed, answer = best_of(lambda: browser.get("/search/", {"q": text}))
    assert answer.status_code in (200, 302), answer.status_code
    print(f"{label} ({text!r}): page best of {RUNS} {elapsed * 1000:.0f} ms, "
          f"answer {answer.status_code}")
    coupons = coupon_search(text=text, filters=SearchFilters())
    count = CappedPaginator(coupons, 25).object_list[:CappedPaginator.cap + 1]
    for name, query in (("capped count", count.values("id")), ("page of 25", coupons[:25])):
        plan = query.explain(analyze=True)
        took = re.search(r"Execution Time: ([\d.]+) ms", plan).group(1)
        indexes = sorted(set(re.findall(r"[Ii]ndex(?: Only)? Scan (?:Backward )?using (\w+)",
                                        plan)))
        seq = sorted(set(re.findall(r"Seq Scan on (\w+)", plan)))
        print(f"    {name:>12}: {took:>9} ms  indexes {', '.join(indexes) or '-'}"
              f"{'; seq scan ' + ', '.join(seq) if seq else ''}")


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
        assert (b"More than 10000 coupons" if args.coupons > 10_000
                else f"{args.coupons} coupons".encode()) in answer.content
        return answer

    now, _ = best_of(page)
    then, count = best_of(lambda: before_issue_16("whale"))
    print(f"GET /search/?q=whale now: best of {RUNS} {now * 1000:.0f} ms "
          "(\"More than 10000 coupons\", its first 25 rows, matched by user id)")
    print(f"the old way (ids loaded, count and page by pk IN): best of {RUNS} "
          f"{then * 1000:.0f} ms for {count} coupons")
    print(f"now / before: {now / then:.3f}")
    if args.everyone:
        started = time.monotonic()
        typed = store_everyone(args.everyone)
        print(f"stored {args.everyone} coupons of {args.everyone} users with a lease each in "
              f"{time.monotonic() - started:.1f}s")
        for label, text in typed.items():
            explain_search(browser, label, text)


def main() -> None:
    args = parse_args()
    os.chdir(ROOT)
    os.environ["DJANGO_HTTPS"] = "0"  # the test client speaks plain HTTP
    with throwaway_database(args.db_name):
        bench(args)
    print(f"load average {load_average()} on {os.cpu_count()} CPUs "
          "(other work on the machine moves these figures)")


if __name__ == "__main__":
    main()

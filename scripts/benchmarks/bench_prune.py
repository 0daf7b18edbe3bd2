"""Prune time for 1,000,000 outbox rows: row by row, and by day partition.

Rerun (PostgreSQL; a few minutes at the default size on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        nice .venv/bin/python scripts/benchmarks/bench_prune.py --rows 1000000

In a throwaway database (`coupon_bench_prune`, dropped at the end), migrated (the outbox is
partitioned by day, coupons/migrations/0020) with the app and pruner roles set up, each way
loads --rows published outbox rows over three days past the 7-day window, one old day holding
one unpublished row beside nine published ones, and 1,000 rows inside the window, then times
`retention_prune()`, what `manage.py prune` runs:

  row by row    the days have no partition of their own, so the rows sit in the DEFAULT
                partition, as in a table without partitions: coupons_prune_outbox deletes them
                one by one (every row trigger fires, every row is WAL-logged);
  by partition  the days have their partitions (made as `outbox_partitions` makes them,
                owned by coupon_pruner): the same function drops the three past days whole
                and keeps the day with the unpublished row.

The ratio is row by row / by partition, from the same run. The app role's DROP of a partition
is tried too, and must be refused.
"""

import argparse
import os
import time
from datetime import timedelta

from bench_setup import load_average, throwaway_database

RECENT = 1000  # rows inside the window
# Days back: three days of published rows and a day holding one unpublished row, per way.
ROW_BY_ROW_DAYS, ROW_BY_ROW_KEPT = (12, 11, 10), 13
BY_PARTITION_DAYS, BY_PARTITION_KEPT = (17, 16, 15), 18


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    return parser.parse_args()


def fill(cursor, rows: int, days: tuple[int, ...], kept_day: int) -> None:
    """`rows` published outbox rows over `days`, one unpublished row `kept_day` days ago (with
    nine published ones beside it), RECENT rows inside the window. Loaded past the triggers
    (session_replication_role = replica, as the superuser), since the database stamps a
    publish with its own clock: these rows stand as days of real publishing would leave them."""
    cursor.execute("SET session_replication_role = replica")
    for back in days:
        cursor.execute(
            """INSERT INTO coupons_outboxevent (event_type, payload, created_at, published_at)
               SELECT 'CouponRedeemed', '{}'::jsonb, t, t + interval '1 second'
               FROM (SELECT date_trunc('day', now()) - make_interval(days => %s)
                            + i * interval '50 ms' AS t
                     FROM generate_series(1, %s) AS i) AS s""",
            [back, rows // len(days)])
    cursor.execute(
        """INSERT INTO coupons_outboxevent (event_type, payload, created_at, published_at)
           SELECT 'CouponRedeemed', '{}'::jsonb, now() - make_interval(days => %s),
                  CASE WHEN i = 1 THEN NULL ELSE now() - make_interval(days => %s) END
           FROM generate_series(1, 10) AS i""",
        [kept_day, kept_day])
    cursor.execute(
        """INSERT INTO coupons_outboxevent (event_type, payload, created_at, published_at)
           SELECT 'CouponRedeemed', '{}'::jsonb, now() - interval '1 day',
                  now() - interval '1 day'
           FROM generate_series(1, %s)""",
        [RECENT])
    cursor.execute("SET session_replication_role = origin")
    # What autovacuum has done long before a day is pruned; left to run now, it would hold the
    # fresh partitions and each DROP would wait deadlock_timeout for it to give way.
    cursor.execute("VACUUM (ANALYZE) coupons_outboxevent")


def timed_prune() -> tuple[float, int]:
    from operations.retention import retention_prune

    started = time.perf_counter()
    run = retention_prune()
    return time.perf_counter() - started, run.outbox_deleted


def app_role_may_drop(partition: str) -> bool:
    from django.db import DatabaseError, connection, transaction

    from operations.db_roles import APP_ROLE

    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL ROLE {APP_ROLE}")
            cursor.execute(f"DROP TABLE {partition}")
    except DatabaseError:
        return False
    return True


def main() -> None:
    args = parse_args()
    os.environ.setdefault("COUPON_APP_DB_PASSWORD", "benchmark-only-app-role-password")
    with throwaway_database("coupon_bench_prune"):
        from django.db import connection

        from coupons.models import OutboxEvent
        from operations.db_roles import setup_db_roles
        from operations.outbox_partitions import outbox_partition_create, partition_name

        setup_db_roles()
        results = {}
        with connection.cursor() as cursor:
            fill(cursor, args.rows, ROW_BY_ROW_DAYS, ROW_BY_ROW_KEPT)
        results["row by row (DEFAULT partition)"] = (*timed_prune(),
                                                     OutboxEvent.objects.count())
        with connection.cursor() as cursor:
            cursor.execute("SELECT (now() AT TIME ZONE 'UTC')::date")
            today = cursor.fetchone()[0]
            days = [today - timedelta(days=back)
                    for back in (*BY_PARTITION_DAYS, BY_PARTITION_KEPT)]
            for day in days:
                assert outbox_partition_create(cursor, day), day
            fill(cursor, args.rows, BY_PARTITION_DAYS, BY_PARTITION_KEPT)
        app_dropped = app_role_may_drop(partition_name(days[0]))
        seconds, removed = timed_prune()
        results["by partition (day partitions)"] = (seconds, removed,
                                                    OutboxEvent.objects.count())
    print(f"\nPrune {args.rows:,} published outbox rows past the window "
          f"(+1 unpublished old row beside 9 published, {RECENT:,} inside the window); "
          f"load average {load_average()}")
    # Rows left count both ways' keepers: 1 unpublished + RECENT each.
    print("| way | seconds | rows removed | rows left in the outbox |")
    print("|---|---|---|---|")
    for way, (seconds, removed, left) in results.items():
        print(f"| {way} | {seconds:.3f} | {removed:,} | {left:,} |")
    slow, fast = (results[way][0] for way in results)
    print(f"ratio: {slow / fast:,.1f}x faster by partition; "
          f"the app role could drop a partition: {'YES (wrong)' if app_dropped else 'no'}")


if __name__ == "__main__":
    main()

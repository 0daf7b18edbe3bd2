"""Prune time for 1,000,000 outbox rows: row by row today, by partition in the proposed design.

Rerun (PostgreSQL; a few minutes at the default size on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        nice .venv/bin/python scripts/bench_prune.py --rows 1000000

In a throwaway database (`coupon_bench_prune`, dropped at the end), migrated, with the app and
pruner roles set up:

  before  --rows published outbox rows past the 7-day window go into coupons_outboxevent, with
          one unpublished old row and 1,000 rows inside the window; `retention_prune()` (what
          `manage.py prune` runs: the SECURITY DEFINER coupons_prune_outbox, a DELETE that
          fires every row trigger) is timed.
  after   the same rows in `bench_outbox`, a copy of the outbox partitioned by day on
          created_at (README "Retention by partition"): partitions owned by the pruner role, the
          parent by the owner, a DEFAULT partition, the same delete-refusing row trigger.
          A SECURITY DEFINER function owned by the pruner drops each partition whose range
          ends before the cutoff and that holds no unpublished row and no row published inside
          the window (two index probes), and is timed. The app role's own DROP is tried and
          must be refused.

The ratio is before / after from the same run. The outbox table itself is not converted (see
README): this measures the design on a copy with the same columns and indexes.
"""

import argparse
import os
import time
from datetime import timedelta

from bench_setup import load_average, throwaway_database

DAY = timedelta(days=1)
OLD_DAYS = (12, 11, 10)  # the bulk: three days of published rows, all past the 7-day window
KEPT_DAY = 13  # an old day holding one unpublished row: its partition must stay
RECENT = 1000  # rows inside the window

PARTITIONED_SQL = """
CREATE TABLE bench_outbox (LIKE coupons_outboxevent INCLUDING DEFAULTS INCLUDING IDENTITY)
    PARTITION BY RANGE (created_at);
ALTER TABLE bench_outbox ADD PRIMARY KEY (id, created_at);
CREATE INDEX bench_outbox_unpublished ON bench_outbox (id) WHERE published_at IS NULL;
CREATE INDEX bench_outbox_published ON bench_outbox (published_at);
CREATE TABLE bench_outbox_default PARTITION OF bench_outbox DEFAULT;
CREATE FUNCTION bench_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'outbox rows are not deleted one by one'; END $$;
CREATE TRIGGER bench_delete_refused BEFORE DELETE ON bench_outbox
    FOR EACH ROW EXECUTE FUNCTION bench_refuse_delete();
"""

DROP_FUNCTION_SQL = """
CREATE FUNCTION bench_prune_outbox_partitions(cutoff timestamptz) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $fn$
DECLARE
    part record;
    upper_bound timestamptz;
    kept boolean;
    removed bigint := 0;
BEGIN
    IF cutoff IS NULL OR cutoff > now() - interval '7 days' THEN
        RAISE EXCEPTION 'prune: cutoff % is inside the retention window', cutoff;
    END IF;
    FOR part IN
        SELECT c.oid::regclass AS name, pg_get_expr(c.relpartbound, c.oid) AS bound,
               c.reltuples::bigint AS estimate
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'bench_outbox'::regclass
    LOOP
        CONTINUE WHEN part.bound = 'DEFAULT';
        upper_bound := (regexp_match(part.bound, 'TO \\(''([^'']+)''\\)'))[1]::timestamptz;
        -- Every row was created before upper_bound; it may have been published later.
        CONTINUE WHEN upper_bound > cutoff;
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %1$s WHERE published_at IS NULL)'
                       ' OR EXISTS (SELECT 1 FROM %1$s WHERE published_at >= $1)', part.name)
            INTO kept USING cutoff;
        CONTINUE WHEN kept;
        EXECUTE format('DROP TABLE %s', part.name);
        removed := removed + greatest(part.estimate, 0);
    END LOOP;
    RETURN removed;
END $fn$;
ALTER FUNCTION bench_prune_outbox_partitions(timestamptz) OWNER TO coupon_pruner;
"""


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    return parser.parse_args()


def fill(cursor, table: str, rows: int) -> None:
    """`rows` published rows over OLD_DAYS, one unpublished row KEPT_DAY days ago (with a few
    published ones beside it), RECENT rows inside the window."""
    per_day = rows // len(OLD_DAYS)
    for days in OLD_DAYS:
        cursor.execute(
            f"""INSERT INTO {table} (event_type, payload, created_at, published_at)
                SELECT 'CouponRedeemed', '{{}}'::jsonb, t, t + interval '1 second'
                FROM (SELECT now() - make_interval(days => %s) + i * interval '50 ms' AS t
                      FROM generate_series(1, %s) AS i) AS s""",  # noqa: S608 - own names
            [days, per_day])
    cursor.execute(
        f"""INSERT INTO {table} (event_type, payload, created_at, published_at)
            SELECT 'CouponRedeemed', '{{}}'::jsonb, now() - make_interval(days => %s),
                   CASE WHEN i = 1 THEN NULL ELSE now() - make_interval(days => %s) END
            FROM generate_series(1, 10) AS i""",  # noqa: S608
        [KEPT_DAY, KEPT_DAY])
    cursor.execute(
        f"""INSERT INTO {table} (event_type, payload, created_at, published_at)
            SELECT 'CouponRedeemed', '{{}}'::jsonb, now() - interval '1 day',
                   now() - interval '1 day'
            FROM generate_series(1, %s)""",  # noqa: S608
        [RECENT])
    cursor.execute(f"ANALYZE {table}")


def before(rows: int) -> tuple[float, int, int]:
    from django.db import connection

    from coupons.models import OutboxEvent
    from operations.retention import retention_prune

    with connection.cursor() as cursor:
        fill(cursor, "coupons_outboxevent", rows)
    started = time.perf_counter()
    run = retention_prune()
    elapsed = time.perf_counter() - started
    return elapsed, run.outbox_deleted, OutboxEvent.objects.count()


def after(rows: int) -> tuple[float, int, int, bool]:
    from django.db import DatabaseError, connection, transaction

    from operations.db_roles import APP_ROLE

    with connection.cursor() as cursor:
        cursor.execute(PARTITIONED_SQL)
        first = (time.time() // 86400 - KEPT_DAY - 1) * 86400
        for day in range(KEPT_DAY + 3):
            cursor.execute(
                f"""CREATE TABLE bench_outbox_p{day} PARTITION OF bench_outbox
                    FOR VALUES FROM (to_timestamp({first + day * 86400}))
                    TO (to_timestamp({first + (day + 1) * 86400}));
                    ALTER TABLE bench_outbox_p{day} OWNER TO coupon_pruner""")
        cursor.execute(DROP_FUNCTION_SQL)
        cursor.execute(f"GRANT SELECT, INSERT ON bench_outbox TO {APP_ROLE}")
        fill(cursor, "bench_outbox", rows)
        try:
            with transaction.atomic():
                cursor.execute(f"SET LOCAL ROLE {APP_ROLE}")
                cursor.execute("DROP TABLE bench_outbox_p0")
            app_role_dropped = True
        except DatabaseError:
            app_role_dropped = False
        started = time.perf_counter()
        cursor.execute("SELECT bench_prune_outbox_partitions(now() - interval '7 days')")
        elapsed = time.perf_counter() - started
        (removed,) = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM bench_outbox")
        (left,) = cursor.fetchone()
    return elapsed, removed, left, app_role_dropped


def main() -> None:
    args = parse_args()
    os.environ.setdefault("COUPON_APP_DB_PASSWORD", "benchmark-only-app-role-password")
    with throwaway_database("coupon_bench_prune") as vendor:
        if vendor != "postgresql":
            raise SystemExit("bench_prune needs a PostgreSQL DATABASE_URL (partitions, roles)")
        from operations.db_roles import setup_db_roles

        setup_db_roles()
        old_time, old_removed, old_left = before(args.rows)
        new_time, new_removed, new_left, app_dropped = after(args.rows)
    print(f"\nPrune {args.rows:,} published outbox rows past the window "
          f"(+1 unpublished old row, {RECENT:,} inside the window); "
          f"load average {load_average()}")
    print("| way | seconds | rows removed | rows left |")
    print("|---|---|---|---|")
    print(f"| row by row (coupons_prune_outbox, today) | {old_time:.2f} | {old_removed:,} | "
          f"{old_left:,} |")
    print(f"| by partition (prototype) | {new_time:.3f} | ~{new_removed:,} (estimate) | "
          f"{new_left:,} |")
    print(f"ratio: {old_time / new_time:,.0f}x faster by partition; "
          f"the app role could drop a partition: {'YES (wrong)' if app_dropped else 'no'}")


if __name__ == "__main__":
    main()

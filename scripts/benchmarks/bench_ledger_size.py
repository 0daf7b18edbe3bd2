"""What the ledger's growth costs on disk: table and index sizes, measured, then scaled up.

Rerun (PostgreSQL; a couple of minutes for 1,000,000 rows on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        nice .venv/bin/python scripts/benchmarks/bench_ledger_size.py --rows 1000000

In a throwaway database (`coupon_bench_ledger_size`, dropped at the end), migrated: --rows
ledger rows shaped like real ones (five per coupon: ISSUE, LOCK, RELEASE, LOCK, REDEEM; 64-hex
request hashes, a UUID Idempotency-Key, order and payment ids, a client actor) are
bulk-loaded with the triggers off (a superuser's session_replication_role = replica: the
journal is not what is measured), then VACUUM ANALYZE. Prints bytes per row of the heap, TOAST
and every index the migrations made, and each scaled linearly to --scale-to rows (a B-tree
grows with its entries; the estimate ignores the shallow extra level a 100x larger tree may
need).
"""

import argparse

from bench_setup import load_average, throwaway_database

OPS = [("ISSUE", "", "AVAILABLE"), ("LOCK", "AVAILABLE", "LOCKED"),
       ("RELEASE", "LOCKED", "AVAILABLE"), ("LOCK", "AVAILABLE", "LOCKED"),
       ("REDEEM", "LOCKED", "USED")]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--scale-to", type=int, default=100_000_000)
    return parser.parse_args()


def load(rows: int) -> None:
    from django.db import connection

    coupons = rows // len(OPS)
    steps = ", ".join(f"({n + 1}, '{op}', '{before}', '{after}')"
                      for n, (op, before, after) in enumerate(OPS))
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(
            """INSERT INTO coupons_usercoupon (user_id, template_id, template_version_id,
                   status, state_version, issued_at, updated_at)
               SELECT 'user-' || i, 1, 1, 'USED', 5, now(), now()
               FROM generate_series(1, %s) AS i""", [coupons])
        cursor.execute(
            f"""INSERT INTO coupons_couponoperation (coupon_id, op_type, from_state, to_state,
                    from_version, to_version, actor, order_id, payment_id, refund_id,
                    idempotency_key, request_hash, reason, created_at)
                SELECT c.id, s.op, s.before, s.after, s.version - 1, s.version, 'client:12',
                       CASE WHEN s.op = 'ISSUE' THEN '' ELSE 'order-' || c.id END,
                       CASE WHEN s.op = 'REDEEM' THEN 'pay-' || c.id ELSE '' END, '',
                       gen_random_uuid()::text, md5(random()::text) || md5(random()::text),
                       '', now() - interval '1 day' + s.version * interval '1 minute'
                FROM coupons_usercoupon c,
                     (VALUES {steps}) AS s(version, op, before, after)""")  # noqa: S608
        cursor.execute("SET session_replication_role = DEFAULT")
        cursor.execute("VACUUM ANALYZE coupons_couponoperation")


def sizes() -> tuple[int, list[tuple[str, int]]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM coupons_couponoperation")
        (count,) = cursor.fetchone()
        cursor.execute(
            """SELECT 'heap', pg_relation_size('coupons_couponoperation')
               UNION ALL
               SELECT 'toast', COALESCE(pg_total_relation_size(reltoastrelid), 0)
               FROM pg_class WHERE oid = 'coupons_couponoperation'::regclass
               UNION ALL
               SELECT 'index ' || indexrelid::regclass::text, pg_relation_size(indexrelid)
               FROM pg_index WHERE indrelid = 'coupons_couponoperation'::regclass
               ORDER BY 2 DESC""")
        return count, cursor.fetchall()


def main() -> None:
    args = parse_args()
    with throwaway_database("coupon_bench_ledger_size"):
        load(args.rows)
        count, parts = sizes()
    total = sum(size for _, size in parts)
    print(f"\nLedger ({count:,} rows measured; load average {load_average()})")
    print(f"| part | measured MiB | bytes/row | at {args.scale_to:,} rows (GiB) |")
    print("|---|---|---|---|")
    for name, size in [*parts, ("total", total)]:
        print(f"| {name} | {size / 2**20:,.1f} | {size / count:,.0f} | "
              f"{size / count * args.scale_to / 2**30:,.1f} |")


if __name__ == "__main__":
    main()

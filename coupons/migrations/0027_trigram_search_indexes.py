"""Trigram indexes for the console's search by any part of an id (`demo_a` finds
`ORDER_DEMO_A`).

The search asks `UPPER(column) LIKE '%TYPED%'` (timeline/search.py); a GIN index of the same
expression with pg_trgm's `gin_trgm_ops` answers it without reading every row. pg_trgm ships
with PostgreSQL's contrib; creating the extension needs the database owner, who runs the
migrations. PostgreSQL only, as 0019_search_indexes.
"""

from django.db import migrations

INDEXES = [
    ("coupons_usercoupon", "coupon_user_trgm", "user_id"),
    ("coupons_couponlock", "lock_order_trgm", "order_id"),
    ("coupons_conflictcase", "case_order_trgm", "order_id"),
    ("coupons_conflictcase", "case_payment_trgm", "payment_id"),
    ("coupons_redemption", "redemption_payment_trgm", "payment_id"),
    ("coupons_orderfact", "order_fact_order_trgm", "order_id"),
]


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for table, name, column in INDEXES:
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} "
                              f"USING gin (UPPER({column}) gin_trgm_ops)")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for _table, name, _column in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):

    dependencies = [
        ("coupons", "0026_prune_on_the_database_clock"),
    ]

    operations = [migrations.RunPython(create, drop)]

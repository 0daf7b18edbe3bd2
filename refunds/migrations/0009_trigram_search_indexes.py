"""Trigram indexes for the console's search by any part of a refund's order or refund id, as
coupons/migrations/0027_trigram_search_indexes does for the coupon side."""

from django.db import migrations

INDEXES = [
    ("refunds_refundcoupon", "refund_coupon_order_trgm", "order_id"),
    ("refunds_refundcoupon", "refund_coupon_refund_trgm", "refund_id"),
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
        ("refunds", "0008_evidence_unsealed"),
    ]

    operations = [migrations.RunPython(create, drop)]

"""Indexes for the console's search as a person types: any case, by the beginning.

The search asks `UPPER(column) LIKE 'TYPED%'` (timeline/search.py); a btree on the same
expression with `text_pattern_ops` answers it as a range, whatever the database's collation.
A lock id is found from its first characters as text (`id::text LIKE 'd6acafcd%'`).

PostgreSQL only (SQLite has no operator classes, and its test tables are small), so the
indexes are SQL rather than Meta.indexes; refunds_refundcoupon's two are here too, beside the
coupon-side arms of the same search.
"""

from django.db import migrations

INDEXES = [
    ("coupons_usercoupon", "coupon_user_upper", "UPPER(user_id) text_pattern_ops"),
    ("coupons_couponlock", "lock_order_upper", "UPPER(order_id) text_pattern_ops"),
    ("coupons_couponlock", "lock_id_text", "(id::text) text_pattern_ops"),
    ("coupons_conflictcase", "case_order_upper", "UPPER(order_id) text_pattern_ops"),
    ("coupons_conflictcase", "case_payment_upper", "UPPER(payment_id) text_pattern_ops"),
    ("coupons_redemption", "redemption_payment_upper", "UPPER(payment_id) text_pattern_ops"),
    ("coupons_orderfact", "order_fact_order_upper",
     "UPPER(order_id) text_pattern_ops, fact_type"),
    ("coupons_coupontemplate", "template_code_upper", "UPPER(code)"),
    ("refunds_refundcoupon", "refund_coupon_order_upper", "UPPER(order_id) text_pattern_ops"),
    ("refunds_refundcoupon", "refund_coupon_refund_upper", "UPPER(refund_id) text_pattern_ops"),
]


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, name, columns in INDEXES:
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({columns})")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for _table, name, _columns in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):

    dependencies = [
        ("coupons", "0018_check_watermark"),
        ("refunds", "0006_unswitchable_triggers"),
    ]

    operations = [migrations.RunPython(create, drop)]

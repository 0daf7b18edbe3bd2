"""The journal's first entries of ledger rows, order bindings and redemptions by the coupon
their row names, newest first: the per-coupon check reads the newest of them, and a rollback
that deleted those rows and left their entries shows (coupons/evidence/journal_tail.py).

The coupon is read from the entry's canonical text by a regular expression, not by parsing it
as JSON: an entry that is no JSON (any login may INSERT one, and the checks name it) must not
make its INSERT fail. The expression and the predicate are written again, word for word, in
journal_tail.COUPON_OF_ENTRY and SUBJECTS. PostgreSQL only, as 0027_trigram_search_indexes.
"""

from django.db import migrations

INDEX = (
    "CREATE INDEX IF NOT EXISTS journal_coupon_idx ON coupons_journalentry "
    "((substring(content from '\"coupon_id\":([0-9]{1,19})[,}]')), id) "
    "WHERE parent_hash IS NULL AND subject IN "
    "('coupons.couponoperation', 'coupons.ordercoupon', 'coupons.redemption')"
)


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(INDEX)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS journal_coupon_idx")


class Migration(migrations.Migration):

    dependencies = [
        ("coupons", "0037_watermark_rests_on_signed_head"),
    ]

    operations = [migrations.RunPython(create, drop)]

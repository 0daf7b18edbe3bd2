from django.db import migrations

from coupons.evidence.journal import backfill


def journal_existing_evidence(apps, schema_editor):
    # Rows written before their tables were journaled start their journal as they are now.
    backfill(apps, "coupons.couponoperation",
             leaves_out=("prev_hash", "content_hash", "chain_key_id"))
    for label in ("coupons.redemption", "coupons.ordercoupon", "coupons.commandrejection"):
        backfill(apps, label, leaves_out=("seal",))


class Migration(migrations.Migration):

    dependencies = [
        ('coupons', '0022_journal_log'),
    ]

    operations = [
        migrations.RunPython(journal_existing_evidence, migrations.RunPython.noop),
    ]

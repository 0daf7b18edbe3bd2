from django.db import migrations

from coupons.evidence.journal import backfill


def journal_existing_rows(apps, schema_editor):
    # Decisions and compensations written before the journal start it as they are now.
    backfill(apps, "refunds.compensation", leaves_out=("seal",))
    backfill(apps, "refunds.refundcoupon", leaves_out=("seal",))


class Migration(migrations.Migration):

    dependencies = [
        ("coupons", "0021_journal"),
        ("refunds", "0006_unswitchable_triggers"),
    ]

    operations = [
        migrations.RunPython(journal_existing_rows, migrations.RunPython.noop),
    ]

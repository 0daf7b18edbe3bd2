from django.db import migrations

from coupons.evidence.journal import backfill


def journal_existing_findings(apps, schema_editor):
    # Findings opened before they were journaled start their journal as they are now.
    backfill(apps, "coupons.finding", leaves_out=("last_seen_at",))


class Migration(migrations.Migration):

    dependencies = [
        ('coupons', '0031_finding_summary_codes'),
    ]

    operations = [
        migrations.RunPython(journal_existing_findings, migrations.RunPython.noop),
    ]

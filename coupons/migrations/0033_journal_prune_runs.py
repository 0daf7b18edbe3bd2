from django.db import migrations

from coupons.evidence.journal import backfill


def journal_existing_prune_runs(apps, schema_editor):
    # Runs recorded before prune journaled them start their journal as they are now.
    backfill(apps, "coupons.prunerun", leaves_out=())


class Migration(migrations.Migration):

    dependencies = [
        ('coupons', '0032_journal_findings'),
    ]

    operations = [
        migrations.RunPython(journal_existing_prune_runs, migrations.RunPython.noop),
    ]

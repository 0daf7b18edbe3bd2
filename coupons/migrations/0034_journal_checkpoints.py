from django.db import migrations

from coupons.evidence.journal import backfill


def journal_existing_checkpoints(apps, schema_editor):
    # Checkpoints signed before they were journaled start their journal as they are now.
    backfill(apps, "coupons.ledgercheckpoint",
             leaves_out=("tree_size", "root", "chunk_roots", "chunk_first_ids"))


class Migration(migrations.Migration):

    dependencies = [
        ('coupons', '0033_journal_prune_runs'),
    ]

    operations = [
        migrations.RunPython(journal_existing_checkpoints, migrations.RunPython.noop),
    ]

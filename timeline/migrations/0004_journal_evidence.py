from django.db import migrations

from coupons.evidence.journal import backfill


def journal_existing_evidence(apps, schema_editor):
    # Notes and view records written before their tables were journaled, as they are now.
    for label in ("timeline.staffnote", "timeline.viewrecord"):
        backfill(apps, label, leaves_out=("seal",))


class Migration(migrations.Migration):

    dependencies = [
        ('coupons', '0023_journal_evidence'),
        ('timeline', '0003_team'),
    ]

    operations = [
        migrations.RunPython(journal_existing_evidence, migrations.RunPython.noop),
    ]

"""Seals on refund decisions and compensations (gone since); existing rows are sealed as
coupons 0015 seals the core's evidence rows."""

import importlib

from django.db import migrations, models

coupons_seals = importlib.import_module("coupons.migrations.0015_evidence_seals")


def seal_existing_rows(apps, schema_editor):
    for name in ("RefundCoupon", "Compensation"):
        coupons_seals.seal_table(apps.get_model("refunds", name), (), schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ('refunds', '0004_compensation_reversals'),
        ('coupons', '0015_evidence_seals'),
    ]

    operations = [
        migrations.AddField(
            model_name='compensation',
            name='seal',
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name='refundcoupon',
            name='seal',
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.RunPython(seal_existing_rows, migrations.RunPython.noop),
    ]

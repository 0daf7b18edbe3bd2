"""Templates name their return policy (null: the default); a closed campaign stops issuing."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("coupons", "0006_ledger_hash_chain"),
        ("refunds", "0002_return_policies"),
    ]

    operations = [
        migrations.AddField(
            model_name='coupontemplate',
            name='issuable',
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name='coupontemplate',
            name='return_policy',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='refunds.returnpolicy'),
        ),
        migrations.AddField(
            model_name='coupontemplateversion',
            name='return_policy',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='refunds.returnpolicy'),
        ),
    ]

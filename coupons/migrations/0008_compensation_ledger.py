"""Money compensations on the ledger: COMPENSATE rows (same state, version +1) with an amount."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("coupons", "0007_template_return_policy"),
        ("refunds", "0003_refund_coupons"),
    ]

    operations = [
        migrations.AddField(
            model_name='couponoperation',
            name='amount',
            field=models.DecimalField(blank=True, decimal_places=2, max_digits=12, null=True),
        ),
        migrations.AlterField(
            model_name='couponoperation',
            name='op_type',
            field=models.CharField(choices=[('ISSUE', 'Issue'), ('LOCK', 'Lock'), ('RENEW', 'Renew'), ('REDEEM', 'Redeem'), ('RELEASE', 'Release'), ('EXPIRE', 'Expire'), ('VOID', 'Void'), ('RETURN', 'Return'), ('REVERSE', 'Reverse'), ('COMPENSATE', 'Compensate')], max_length=16),
        ),
    ]

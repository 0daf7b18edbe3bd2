"""Compensations for one ledger operation (a reversal or money), decided by a second operator.

Existing rows (the presale and conflict-case shortfalls, PROPOSED by the system) keep their
values and become approvable money compensations: the new fields are empty for them.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("refunds", "0003_refund_coupons"),
        ("coupons", "0008_compensation_ledger"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='compensation',
            name='one_compensation_per_shortfall',
        ),
        migrations.AddField(
            model_name='compensation',
            name='decided_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='compensation',
            name='decided_by',
            field=models.CharField(blank=True, max_length=128),
        ),
        migrations.AddField(
            model_name='compensation',
            name='decision_note',
            field=models.CharField(blank=True, max_length=1000),
        ),
        migrations.AddField(
            model_name='compensation',
            name='idempotency_key',
            field=models.CharField(blank=True, max_length=255),
        ),
        migrations.AddField(
            model_name='compensation',
            name='operation',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='compensations', to='coupons.couponoperation'),
        ),
        migrations.AddField(
            model_name='compensation',
            name='request_hash',
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name='compensation',
            name='resulting_operation',
            field=models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='compensation_decision', to='coupons.couponoperation'),
        ),
        migrations.AlterField(
            model_name='compensation',
            name='amount',
            field=models.DecimalField(blank=True, decimal_places=2, max_digits=12, null=True),
        ),
        migrations.AlterField(
            model_name='compensation',
            name='created_by',
            field=models.CharField(help_text='Who proposed it.', max_length=128),
        ),
        migrations.AlterField(
            model_name='compensation',
            name='kind',
            field=models.CharField(choices=[('PRESALE_EXPIRED_COUPON', 'Presale Expired Coupon'), ('ORDER_DISCOUNT_REFUND', 'Order Discount Refund'), ('REFUND_CREDIT', 'Refund Credit'), ('REVERSE_OPERATION', 'Reverse Operation'), ('MONEY', 'Money')], max_length=32),
        ),
        migrations.AlterField(
            model_name='compensation',
            name='order_id',
            field=models.CharField(blank=True, db_index=True, max_length=64),
        ),
        migrations.AddConstraint(
            model_name='compensation',
            constraint=models.UniqueConstraint(condition=models.Q(('operation__isnull', True)), fields=('order_id', 'coupon', 'kind'), name='one_compensation_per_shortfall'),
        ),
        migrations.AddConstraint(
            model_name='compensation',
            constraint=models.UniqueConstraint(condition=models.Q(('status', 'PROPOSED')), fields=('operation',), name='one_open_compensation_per_operation'),
        ),
    ]

"""Refund decisions: one RefundCoupon per (refund, coupon); REFUND_CREDIT compensations."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("refunds", "0002_return_policies"),
        ("coupons", "0007_template_return_policy"),
    ]

    operations = [
        migrations.AlterField(
            model_name='compensation',
            name='kind',
            field=models.CharField(choices=[('PRESALE_EXPIRED_COUPON', 'Presale Expired Coupon'), ('ORDER_DISCOUNT_REFUND', 'Order Discount Refund'), ('REFUND_CREDIT', 'Refund Credit')], max_length=32),
        ),
        migrations.CreateModel(
            name='RefundCoupon',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('refund_id', models.CharField(max_length=64)),
                ('order_id', models.CharField(db_index=True, max_length=64)),
                ('payment_id', models.CharField(blank=True, max_length=64)),
                ('refund_type', models.CharField(help_text='As the refund service sent it.', max_length=16)),
                ('risk_flag', models.BooleanField(default=False)),
                ('refund_amount', models.DecimalField(decimal_places=2, max_digits=12)),
                ('order_amount', models.DecimalField(blank=True, decimal_places=2, max_digits=12, null=True)),
                ('order_discount', models.DecimalField(blank=True, decimal_places=2, help_text="This coupon's discount in the order's snapshot.", max_digits=12, null=True)),
                ('paid_amount', models.DecimalField(blank=True, decimal_places=2, help_text="What the order paid: order amount minus all its coupons' discounts.", max_digits=12, null=True)),
                ('refunded_total', models.DecimalField(blank=True, decimal_places=2, help_text='All refunds of the order so far, this one included.', max_digits=12, null=True)),
                ('coupon_share', models.DecimalField(blank=True, decimal_places=2, help_text="The part of this coupon's discount this refund gives back (money decision).", max_digits=12, null=True)),
                ('action', models.CharField(blank=True, choices=[('RETURN', 'Return'), ('KEEP_USED', 'Keep Used'), ('VOID', 'Void'), ('COMPENSATE', 'Compensate'), ('MANUAL_REVIEW', 'Manual Review'), ('RELEASE_LOCK', 'Release Lock')], max_length=16)),
                ('facts', models.JSONField(blank=True, help_text='RefundFacts it was decided on.', null=True)),
                ('rule_index', models.PositiveIntegerField(blank=True, null=True)),
                ('rule_label', models.CharField(blank=True, max_length=200)),
                ('requires_approval', models.BooleanField(default=False)),
                ('compensation', models.JSONField(blank=True, default=dict)),
                ('status', models.CharField(choices=[('AWAITING_REDEMPTION', 'Awaiting Redemption'), ('DECIDED', 'Decided'), ('PENDING_APPROVAL', 'Pending Approval'), ('EXECUTED', 'Executed'), ('REJECTED', 'Rejected')], max_length=24)),
                ('reason', models.CharField(blank=True, max_length=500)),
                ('created_by', models.CharField(max_length=128)),
                ('received_at', models.DateTimeField(help_text='When the refund reached us.')),
                ('decided_at', models.DateTimeField(blank=True, null=True)),
                ('reviewed_by', models.CharField(blank=True, max_length=128)),
                ('reviewed_at', models.DateTimeField(blank=True, null=True)),
                ('review_note', models.CharField(blank=True, max_length=1000)),
                ('executed_action', models.CharField(blank=True, choices=[('RETURN', 'Return'), ('KEEP_USED', 'Keep Used'), ('VOID', 'Void'), ('COMPENSATE', 'Compensate'), ('MANUAL_REVIEW', 'Manual Review'), ('RELEASE_LOCK', 'Release Lock')], max_length=16)),
                ('compensation_coupon', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='coupons.usercoupon')),
                ('compensation_record', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='refunds.compensation')),
                ('coupon', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='refund_decisions', to='coupons.usercoupon')),
                ('operation', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='refund_decision', to='coupons.couponoperation')),
                ('policy_version', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='decisions', to='refunds.returnpolicyversion')),
                ('redemption', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='coupons.redemption')),
            ],
            options={
                'ordering': ['-received_at', '-id'],
                'indexes': [models.Index(fields=['coupon', 'status'], name='refund_coupon_status')],
                'constraints': [models.UniqueConstraint(fields=('refund_id', 'coupon'), name='one_decision_per_refund')],
            },
        ),
    ]

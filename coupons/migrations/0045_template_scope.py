"""A template's scope: the stores and the channel its coupons apply to (none: all), a term
frozen with each version, indexed for the API's and the console's scope filters."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('coupons', '0044_goodwill_proposals'),
        ('refunds', '0012_database_holds_the_rules'),
    ]

    operations = [
        migrations.AddField(
            model_name='coupontemplate',
            name='channel',
            field=models.CharField(blank=True, choices=[('DINE_IN', 'Dine-in'), ('DELIVERY', 'Delivery'), ('TAKEAWAY', 'Takeaway')], default='', help_text='The channel the coupon applies to; none: every channel.', max_length=16),
        ),
        migrations.AddField(
            model_name='coupontemplate',
            name='stores',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=64), blank=True, default=list, help_text='Store ids the coupon applies at; none: every store.', size=200),
        ),
        migrations.AddField(
            model_name='coupontemplateversion',
            name='channel',
            field=models.CharField(blank=True, choices=[('DINE_IN', 'Dine-in'), ('DELIVERY', 'Delivery'), ('TAKEAWAY', 'Takeaway')], default='', help_text='The channel the coupon applies to; none: every channel.', max_length=16),
        ),
        migrations.AddField(
            model_name='coupontemplateversion',
            name='stores',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=64), blank=True, default=list, help_text='Store ids the coupon applies at; none: every store.', size=200),
        ),
        migrations.AddIndex(
            model_name='coupontemplate',
            index=django.contrib.postgres.indexes.GinIndex(fields=['stores'], name='template_stores_gin'),
        ),
        migrations.AddIndex(
            model_name='coupontemplate',
            index=models.Index(fields=['channel'], name='template_channel'),
        ),
        migrations.AddIndex(
            model_name='coupontemplateversion',
            index=django.contrib.postgres.indexes.GinIndex(fields=['stores'], name='template_version_stores_gin'),
        ),
        migrations.AddIndex(
            model_name='coupontemplateversion',
            index=models.Index(fields=['channel'], name='template_version_channel'),
        ),
    ]

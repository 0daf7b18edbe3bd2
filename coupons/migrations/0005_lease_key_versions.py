"""Lease-token key ids on locks: which LEASE_TOKEN_SECRETS key each lock's token was made with.

Existing locks were made with the single LEASE_TOKEN_SECRET, whose key id is k1
(config.env.SINGLE_LEASE_KEY_ID).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("coupons", "0004_scoped_clients"),
    ]

    operations = [
        migrations.AddField(
            model_name="couponlock",
            name="token_key_id",
            field=models.CharField(default="k1", max_length=32),
            preserve_default=False,
        ),
    ]

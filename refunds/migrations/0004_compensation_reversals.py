"""Reserved: filled in by the change that owns it (see the commit that adds its operations)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("refunds", "0003_refund_coupons"),
        ("coupons", "0008_compensation_ledger"),
    ]

    operations = []

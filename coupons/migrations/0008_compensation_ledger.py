"""Reserved: filled in by the change that owns it (see the commit that adds its operations)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("coupons", "0007_template_return_policy"),
        ("refunds", "0003_refund_coupons"),
    ]

    operations = []

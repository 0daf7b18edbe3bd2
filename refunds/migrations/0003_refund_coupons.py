"""Reserved: filled in by the change that owns it (see the commit that adds its operations)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("refunds", "0002_return_policies"),
        ("coupons", "0007_template_return_policy"),
    ]

    operations = []

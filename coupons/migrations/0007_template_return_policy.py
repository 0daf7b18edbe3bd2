"""Reserved: filled in by the change that owns it (see the commit that adds its operations)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("coupons", "0006_ledger_hash_chain"),
        ("refunds", "0002_return_policies"),
    ]

    operations = []

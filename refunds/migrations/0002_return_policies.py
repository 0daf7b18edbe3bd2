"""Reserved: filled in by the change that owns it (see the commit that adds its operations)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("refunds", "0001_initial"),
        ("coupons", "0006_ledger_hash_chain"),
    ]

    operations = []

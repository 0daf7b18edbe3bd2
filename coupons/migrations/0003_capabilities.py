"""Reserved: filled in by the change that owns it (see the commit that adds its operations)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("coupons", "0002_conflictcase_inboxmessage_orderfact_and_more"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = []

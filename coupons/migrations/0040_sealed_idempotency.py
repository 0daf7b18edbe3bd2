"""Idempotency-Key records carry a seal (coupons/write/idempotency_seal.py).

Records written before it have none and are never replayed (IDEMPOTENCY_RECORD_INVALID): the
migration cannot tell an honest one from one written past the server, and holds no key to
seal them with. They age out with retention (IDEMPOTENCY_RETENTION_HOURS).
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("coupons", "0039_database_holds_the_rules"),
    ]

    operations = [
        migrations.AddField(
            model_name="idempotencyrecord",
            name="seal",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
    ]

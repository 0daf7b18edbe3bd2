from django.db import migrations, models


class Migration(migrations.Migration):
    """The check's watermark rests on a verified signed head, not on a fingerprint of the rows'
    `xmin`. A watermark written before gets size 0, which no check trusts (and its seal no
    longer holds): the next check of its coupon reads the whole ledger and writes a new one."""

    dependencies = [
        ("coupons", "0036_drop_keyed_chain_and_heads_tree"),
    ]

    operations = [
        migrations.RemoveField(model_name="checkwatermark", name="prefix_digest"),
        migrations.AddField(
            model_name="checkwatermark",
            name="signed_size",
            field=models.BigIntegerField(default=0),
            preserve_default=False,
        ),
    ]

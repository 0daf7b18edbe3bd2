from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("coupons", "0041_presale"),
    ]

    operations = [
        migrations.AddField(
            model_name="reconciliationrun",
            name="last_coupon_id",
            field=models.BigIntegerField(default=0),
        ),
    ]

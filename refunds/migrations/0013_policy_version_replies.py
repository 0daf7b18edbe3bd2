from django.db import migrations, models


class Migration(migrations.Migration):
    """A policy version carries the customer replies' greeting and closing: a policy admin's
    words, frozen with the version by the trigger that freezes its rules."""

    dependencies = [
        ('refunds', '0012_database_holds_the_rules'),
    ]

    operations = [
        migrations.AddField(
            model_name='returnpolicyversion',
            name='replies',
            field=models.JSONField(blank=True, default=dict),
        ),
    ]

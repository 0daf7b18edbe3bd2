# Retention. PruneRun records each `manage.py prune`; `unpublished_kept` refuses
# the DELETE of an unpublished outbox row even when prune switches `delete_refused` off;
# `notify_relay` wakes the outbox relay when a command's transaction commits.

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('coupons', '0008_compensation_ledger'),
        ('refunds', '0004_compensation_reversals'),
    ]

    operations = [
        migrations.CreateModel(
            name='PruneRun',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('ran_at', models.DateTimeField()),
                ('outbox_before', models.DateTimeField()),
                ('idempotency_before', models.DateTimeField()),
                ('inbox_before', models.DateTimeField()),
                ('outbox_deleted', models.PositiveIntegerField()),
                ('idempotency_deleted', models.PositiveIntegerField()),
                ('inbox_deleted', models.PositiveIntegerField()),
            ],
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='outboxevent',
            trigger=pgtrigger.compiler.Trigger(name='unpublished_kept', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (OLD."published_at" IS NULL)', func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='68b4df565a177583f161779ae33ecc9e936e2c0b', operation='DELETE', pgid='pgtrigger_unpublished_kept_02fda', table='coupons_outboxevent', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='outboxevent',
            trigger=pgtrigger.compiler.Trigger(name='notify_relay', sql=pgtrigger.compiler.UpsertTriggerSql(func="PERFORM pg_notify('coupons_outbox', ''); RETURN NULL;", hash='84fa12028dcb375e378d7bc2ce6a2d538a8920af', level='STATEMENT', operation='INSERT', pgid='pgtrigger_notify_relay_330bb', table='coupons_outboxevent', when='AFTER')),
        ),
    ]

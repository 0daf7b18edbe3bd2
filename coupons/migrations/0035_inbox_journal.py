"""Inbox messages are journaled (received, processed, pruned) instead of sealed."""

import coupons.models.trigger_sql
import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations

from coupons.evidence.journal import backfill


def journal_existing_messages(apps, schema_editor):
    # Messages received before they were journaled start their journal as they are now.
    backfill(apps, "coupons.inboxmessage", leaves_out=("seal",))


class Migration(migrations.Migration):

    dependencies = [
        ('coupons', '0034_journal_checkpoints'),
    ]

    operations = [
        migrations.RunPython(journal_existing_messages, migrations.RunPython.noop),
        pgtrigger.migrations.RemoveTrigger(
            model_name='inboxmessage',
            name='frozen_columns',
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='inboxmessage',
            name='outcome_set_once',
        ),
        migrations.RemoveField(
            model_name='inboxmessage',
            name='seal',
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='inboxmessage',
            trigger=pgtrigger.compiler.Trigger(name='frozen_columns', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (to_jsonb(OLD) - '{outcome}'::text[] IS DISTINCT FROM to_jsonb(NEW) - '{outcome}'::text[])", func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='ab9b1bafa1766463c37b6d85cc21de9e35f250f1', operation='UPDATE', pgid='pgtrigger_frozen_columns_f4d44', table='coupons_inboxmessage', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='inboxmessage',
            trigger=pgtrigger.compiler.Trigger(name='outcome_set_once', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (OLD.outcome <> '{}'::jsonb AND OLD.outcome IS DISTINCT FROM NEW.outcome)", func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='27462dce8564d56accc267c968abf5cee3547663', operation='UPDATE', pgid='pgtrigger_outcome_set_once_9114b', table='coupons_inboxmessage', when='BEFORE')),
        ),
    ]

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations

import coupons.models.trigger_sql


class Migration(migrations.Migration):
    """Compensations and refund decisions open in their first status and move one step
    forward; a decision waiting for its approval moves only the approval's and the execution's
    columns (refunds/models.py)."""

    dependencies = [
        ('refunds', '0011_compensation_reason_codes'),
    ]

    operations = [
        pgtrigger.migrations.AddTrigger(
            model_name='compensation',
            trigger=pgtrigger.compiler.Trigger(name='status_opens', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (NEW.status NOT IN ('PROPOSED'))", func="RAISE EXCEPTION 'coupons: % rows open only in their first status', TG_TABLE_NAME USING DETAIL = format('status %s', NEW.status);", hash='428f2d012d4340af19d51c93e271e53edaf84b55', operation='INSERT', pgid='pgtrigger_status_opens_21798', table='refunds_compensation', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='compensation',
            trigger=pgtrigger.compiler.Trigger(name='status_moves', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (OLD.status IS DISTINCT FROM NEW.status AND (OLD.status, NEW.status) NOT IN (('PROPOSED', 'APPROVED'), ('PROPOSED', 'REJECTED')))", func="RAISE EXCEPTION 'coupons: % status moves only one step forward', TG_TABLE_NAME USING DETAIL = format('status %s to %s', OLD.status, NEW.status);", hash='653ef2bc948c85ca7d1f574f6d7aa66b65771270', operation='UPDATE', pgid='pgtrigger_status_moves_2314f', table='refunds_compensation', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='refundcoupon',
            trigger=pgtrigger.compiler.Trigger(name='status_opens', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (NEW.status NOT IN ('AWAITING_REDEMPTION'))", func="RAISE EXCEPTION 'coupons: % rows open only in their first status', TG_TABLE_NAME USING DETAIL = format('status %s', NEW.status);", hash='8818b6e8b26a1c4fab6f4b439c4b0e72332d004d', operation='INSERT', pgid='pgtrigger_status_opens_3aaad', table='refunds_refundcoupon', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='refundcoupon',
            trigger=pgtrigger.compiler.Trigger(name='status_moves', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (OLD.status IS DISTINCT FROM NEW.status AND (OLD.status, NEW.status) NOT IN (('AWAITING_REDEMPTION', 'DECIDED'), ('AWAITING_REDEMPTION', 'EXECUTED'), ('AWAITING_REDEMPTION', 'PENDING_APPROVAL'), ('PENDING_APPROVAL', 'DECIDED'), ('PENDING_APPROVAL', 'EXECUTED'), ('PENDING_APPROVAL', 'REJECTED')))", func="RAISE EXCEPTION 'coupons: % status moves only one step forward', TG_TABLE_NAME USING DETAIL = format('status %s to %s', OLD.status, NEW.status);", hash='4bd9a3b501ce48b26c21ad7238963899c70474b0', operation='UPDATE', pgid='pgtrigger_status_moves_3b874', table='refunds_refundcoupon', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='refundcoupon',
            trigger=pgtrigger.compiler.Trigger(name='frozen_while_pending_approval', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (OLD.status = 'PENDING_APPROVAL' AND (to_jsonb(OLD) - '{status,reviewed_by,reviewed_at,review_note,executed_action,operation_id,compensation_coupon_id,compensation_record_id}'::text[] IS DISTINCT FROM to_jsonb(NEW) - '{status,reviewed_by,reviewed_at,review_note,executed_action,operation_id,compensation_coupon_id,compensation_record_id}'::text[]))", func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='cdb48c432968968f4eb98b1889658cf25de35d94', operation='UPDATE', pgid='pgtrigger_frozen_while_pending_approval_96a0b', table='refunds_refundcoupon', when='BEFORE')),
        ),
    ]

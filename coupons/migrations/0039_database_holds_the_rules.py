import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations

import coupons.models.trigger_sql

# sorted(coupons.write.transitions.state_moves()) when this was written: every (from, to) some
# operation allows. A change of TRANSITIONS that adds or drops a pair needs a migration that
# replaces the function with the new pairs
# (tests/coupons/safety/test_database_holds_the_rules.py fails until then).
PAIRS = [
    ("AVAILABLE", "AVAILABLE"), ("AVAILABLE", "EXPIRED"), ("AVAILABLE", "LOCKED"),
    ("AVAILABLE", "USED"), ("AVAILABLE", "VOID"), ("EXPIRED", "AVAILABLE"),
    ("EXPIRED", "EXPIRED"), ("EXPIRED", "USED"), ("LOCKED", "AVAILABLE"), ("LOCKED", "EXPIRED"),
    ("LOCKED", "LOCKED"), ("LOCKED", "USED"), ("LOCKED", "VOID"), ("USED", "AVAILABLE"),
    ("USED", "EXPIRED"), ("USED", "USED"), ("USED", "VOID"), ("VOID", "AVAILABLE"),
    ("VOID", "EXPIRED"), ("VOID", "USED"), ("VOID", "VOID"),
]

STATE_MOVES = """
    CREATE OR REPLACE FUNCTION coupons_state_moves()
    RETURNS TABLE (from_status text, to_status text)
    LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, public
    AS $$ VALUES {pairs} $$;
""".format(pairs=", ".join(f"('{old}', '{new}')" for old, new in PAIRS))


class Migration(migrations.Migration):
    """The database holds the rules the services keep: a coupon's status, version and lease
    move only along the transition table, one version at a time (coupons/models/state_moves.py);
    cases and findings open only OPEN and move one step forward (append_only.status_moves)."""

    dependencies = [
        ("coupons", "0038_journal_by_coupon"),
    ]

    operations = [
        migrations.RunSQL(STATE_MOVES, "DROP FUNCTION coupons_state_moves()"),
        pgtrigger.migrations.AddTrigger(
            model_name='conflictcase',
            trigger=pgtrigger.compiler.Trigger(name='status_opens', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (NEW.status NOT IN ('OPEN'))", func="RAISE EXCEPTION 'coupons: % rows open only in their first status', TG_TABLE_NAME USING DETAIL = format('status %s', NEW.status);", hash='e4a475fc0a029f08e6f52cb0e860afcc89dd1cda', operation='INSERT', pgid='pgtrigger_status_opens_3e608', table='coupons_conflictcase', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='conflictcase',
            trigger=pgtrigger.compiler.Trigger(name='status_moves', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (OLD.status IS DISTINCT FROM NEW.status AND (OLD.status, NEW.status) NOT IN (('OPEN', 'DISMISSED'), ('OPEN', 'RESOLVED')))", func="RAISE EXCEPTION 'coupons: % status moves only one step forward', TG_TABLE_NAME USING DETAIL = format('status %s to %s', OLD.status, NEW.status);", hash='96aaaee8c9437c9d8f91a8befee32e9eb6bad26e', operation='UPDATE', pgid='pgtrigger_status_moves_5aa4c', table='coupons_conflictcase', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='finding',
            trigger=pgtrigger.compiler.Trigger(name='status_opens', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (NEW.status NOT IN ('OPEN'))", func="RAISE EXCEPTION 'coupons: % rows open only in their first status', TG_TABLE_NAME USING DETAIL = format('status %s', NEW.status);", hash='ccb8816ef379e1a5a160d26ab209503e40fdbea6', operation='INSERT', pgid='pgtrigger_status_opens_c880e', table='coupons_finding', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='finding',
            trigger=pgtrigger.compiler.Trigger(name='status_moves', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (OLD.status IS DISTINCT FROM NEW.status AND (OLD.status, NEW.status) NOT IN (('OPEN', 'CLOSED'), ('OPEN', 'RESOLVED')))", func="RAISE EXCEPTION 'coupons: % status moves only one step forward', TG_TABLE_NAME USING DETAIL = format('status %s to %s', OLD.status, NEW.status);", hash='9b89a36f7502b32bc1f1f6ea22c5d52cbae53397', operation='UPDATE', pgid='pgtrigger_status_moves_fe68e', table='coupons_finding', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='usercoupon',
            trigger=pgtrigger.compiler.Trigger(name='state_moves', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition='WHEN ((OLD.status, OLD.state_version, OLD.current_lock_id, OLD.locked_order_id, OLD.lock_token_hash, OLD.lock_expires_at) IS DISTINCT FROM (NEW.status, NEW.state_version, NEW.current_lock_id, NEW.locked_order_id, NEW.lock_token_hash, NEW.lock_expires_at))', func="\n        IF NEW.state_version IS DISTINCT FROM OLD.state_version + 1 THEN\n            RAISE EXCEPTION 'coupons: a coupon state moves with its state_version up by one'\n                USING DETAIL = format('coupon %s: version %s to %s', OLD.id,\n                                      OLD.state_version, NEW.state_version);\n        END IF;\n        IF NOT EXISTS (SELECT 1 FROM coupons_state_moves() m\n                       WHERE m.from_status = OLD.status AND m.to_status = NEW.status) THEN\n            RAISE EXCEPTION 'coupons: no operation moves a coupon from % to %',\n                OLD.status, NEW.status USING DETAIL = format('coupon %s', OLD.id);\n        END IF;\n        RETURN NEW;", hash='f2355d557c033d8f44d7f81b24068167e51c6c6c', operation='UPDATE', pgid='pgtrigger_state_moves_c415e', table='coupons_usercoupon', when='BEFORE')),
        ),
    ]

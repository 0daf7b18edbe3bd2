"""The keyed chain and the evidence seals (both gone since: migrations 0035 and 0036).

Ledger rows already written keep their unkeyed hashes; each coupon that has some gets one sealed
UnkeyedLedgerPrefix (how far they go, the last one's hash), so an unkeyed row written later is a
forgery the check names. Existing redemptions, order bindings, refusals and inbox messages are
sealed under the chain key then current. On PostgreSQL their tables' user triggers are
switched off around the backfill (it runs as the owner), and the inbox's triggers are replaced
after it, so that its seal may move once with the outcome.
"""

import hashlib
import hmac
import importlib
from contextlib import contextmanager

import django.db.models.deletion
import pgtrigger.compiler
import pgtrigger.migrations
from django.conf import settings
from django.db import migrations, models

canonical_json = importlib.import_module("coupons.migrations.0006_ledger_hash_chain").canonical_json


# Frozen copies of what this migration took from coupons/evidence/ledger_chain.py. Every seal
# and prefix it writes is dropped again (0035, 0036), so the key it once took from the chain's
# keys, which are gone, no longer matters: the server's SECRET_KEY stands in.
def current_key_id() -> str:
    return "m0015"


def mac(key_id: str, purpose: str, message: str) -> str:
    return hmac.new(settings.SECRET_KEY.encode(), f"{purpose}\n{message}".encode(),
                    hashlib.sha256).hexdigest()


def prefix_seal(coupon_id: int, through_version: int, head_hash: str, key_id: str) -> str:
    return f"{key_id}:" + mac(key_id, "unkeyed-prefix",
                              f"{coupon_id}\n{through_version}\n{head_hash}")

# Table → the columns its seal leaves out (as the models' SEAL_LEAVES_OUT say).
SEALED = {"Redemption": ("succeeded",), "OrderCoupon": (), "CommandRejection": (),
          "InboxMessage": ()}
BATCH = 1000


def row_seal(row, leaves_out) -> str:
    """A row's seal as coupons/evidence/seals.py made it (gone since every sealed table is
    journaled): the HMAC of the table and the row's canonical content."""
    key_id = current_key_id()
    skip = {"id", "seal", *leaves_out}
    return f"{key_id}:" + mac(key_id, f"seal:{row._meta.label_lower}", canonical_json(row, skip))


def seal_existing_rows(apps, schema_editor):
    for name, leaves_out in SEALED.items():
        seal_table(apps.get_model("coupons", name), leaves_out, schema_editor)


def seal_table(model, leaves_out, schema_editor):
    """Seal every unsealed row of `model`, in batches (refunds 0005 uses it too)."""
    with triggers_off(schema_editor, model._meta.db_table):
        batch = []
        for row in model.objects.filter(seal="").order_by("pk").iterator(chunk_size=BATCH):
            row.seal = row_seal(row, leaves_out=leaves_out)
            batch.append(row)
            if len(batch) == BATCH:
                model.objects.bulk_update(batch, ["seal"])
                batch = []
        model.objects.bulk_update(batch, ["seal"])


def record_unkeyed_prefixes(apps, schema_editor):
    """One sealed prefix per coupon with ledger rows: every such row is unkeyed so far."""
    CouponOperation = apps.get_model("coupons", "CouponOperation")
    UnkeyedLedgerPrefix = apps.get_model("coupons", "UnkeyedLedgerPrefix")
    key_id, batch, last = current_key_id(), [], None

    def prefix(op):
        return UnkeyedLedgerPrefix(
            coupon_id=op.coupon_id, through_version=op.to_version, head_hash=op.content_hash,
            seal=prefix_seal(op.coupon_id, op.to_version, op.content_hash, key_id))

    rows = (CouponOperation.objects.filter(chain_key_id="").order_by("coupon_id", "to_version")
            .only("coupon_id", "to_version", "content_hash"))
    for op in rows.iterator(chunk_size=2000):
        if last is not None and op.coupon_id != last.coupon_id:
            batch.append(prefix(last))
            if len(batch) == BATCH:
                UnkeyedLedgerPrefix.objects.bulk_create(batch)
                batch = []
        last = op
    if last is not None:
        batch.append(prefix(last))
    UnkeyedLedgerPrefix.objects.bulk_create(batch)


@contextmanager
def triggers_off(schema_editor, table):
    """ALTER TABLE ... DISABLE TRIGGER USER around a backfill (PostgreSQL; SQLite has none).
    Deferred foreign-key checks are run first: ALTER TABLE refuses to run over pending ones."""
    postgres = schema_editor.connection.vendor == "postgresql"
    if postgres:
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        schema_editor.execute(f'ALTER TABLE "{table}" DISABLE TRIGGER USER')
    yield
    if postgres:
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        schema_editor.execute(f'ALTER TABLE "{table}" ENABLE TRIGGER USER')


class Migration(migrations.Migration):

    dependencies = [
        ('coupons', '0014_lookup_indexes'),
    ]

    operations = [
        migrations.CreateModel(
            name='UnkeyedLedgerPrefix',
            fields=[
                ('coupon', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, primary_key=True, related_name='unkeyed_ledger_prefix', serialize=False, to='coupons.usercoupon')),
                ('through_version', models.PositiveIntegerField()),
                ('head_hash', models.CharField(max_length=64)),
                ('seal', models.CharField(max_length=100)),
            ],
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='inboxmessage',
            name='frozen_columns',
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='inboxmessage',
            name='outcome_set_once',
        ),
        migrations.AddField(
            model_name='commandrejection',
            name='seal',
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name='couponoperation',
            name='chain_key_id',
            field=models.CharField(blank=True, max_length=32),
        ),
        migrations.AddField(
            model_name='inboxmessage',
            name='seal',
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name='ordercoupon',
            name='seal',
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name='redemption',
            name='seal',
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.RunPython(seal_existing_rows, migrations.RunPython.noop),
        migrations.RunPython(record_unkeyed_prefixes, migrations.RunPython.noop),
        pgtrigger.migrations.AddTrigger(
            model_name='inboxmessage',
            trigger=pgtrigger.compiler.Trigger(name='frozen_columns', sql=pgtrigger.compiler.UpsertTriggerSql(condition="WHEN (to_jsonb(OLD) - '{outcome,seal}'::text[] IS DISTINCT FROM to_jsonb(NEW) - '{outcome,seal}'::text[])", func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='a36218b01919aeac126caa07589010ec6a529f60', operation='UPDATE', pgid='pgtrigger_frozen_columns_f4d44', table='coupons_inboxmessage', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='inboxmessage',
            trigger=pgtrigger.compiler.Trigger(name='outcome_set_once', sql=pgtrigger.compiler.UpsertTriggerSql(condition="WHEN (OLD.outcome <> '{}'::jsonb AND (OLD.outcome IS DISTINCT FROM NEW.outcome OR OLD.seal IS DISTINCT FROM NEW.seal))", func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='daea480807262f620fd20709d26a6e6324d4dc9c', operation='UPDATE', pgid='pgtrigger_outcome_set_once_9114b', table='coupons_inboxmessage', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='unkeyedledgerprefix',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='0592afb5556ca58a11f9b3d32859e28c0331a17b', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_f6cba', table='coupons_unkeyedledgerprefix', when='BEFORE')),
        ),
    ]

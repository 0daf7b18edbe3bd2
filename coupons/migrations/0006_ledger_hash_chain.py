"""The ledger's hash chain, and triggers that keep history rows append-only on PostgreSQL.

The backfill runs before the triggers exist: they would refuse its UPDATEs. On SQLite the
trigger operations do nothing (pgtrigger supports PostgreSQL only).
"""

import hashlib
import json
from datetime import UTC, date, datetime
from decimal import Decimal

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models

# Frozen copies of what this migration took from coupons/evidence/ledger_chain.py (gone with
# the chain, migration 0036), so that it still runs on a fresh database; coupons 0015 reads
# `canonical_json` from here.
GENESIS = ""
HASH_FIELDS = {"id", "content_hash", "prev_hash", "chain_key_id"}


def _canonical(field, value):
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return f"{value:.{field.decimal_places}f}"
    if isinstance(value, bool | int | float | dict | list):
        return value
    return str(value)


def canonical_json(row, skip=HASH_FIELDS) -> str:
    content = {}
    for field in [f for f in row._meta.get_fields() if f.concrete and not f.many_to_many]:
        value = field.value_from_object(row)
        if field.name in skip or value is None or value == "":
            continue
        content[field.attname] = _canonical(field, value)
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def unkeyed_seal(operation, prev_hash: str) -> None:
    operation.prev_hash = prev_hash
    operation.content_hash = hashlib.sha256(
        f"{prev_hash}\n{canonical_json(operation)}".encode()).hexdigest()


def backfill_hash_chain(apps, schema_editor):
    """Seal every existing row, per coupon in version order."""
    CouponOperation = apps.get_model("coupons", "CouponOperation")
    batch, coupon_id, prev_hash = [], None, GENESIS
    rows = CouponOperation.objects.order_by("coupon_id", "to_version")
    for operation in rows.iterator(chunk_size=2000):
        if operation.coupon_id != coupon_id:
            coupon_id, prev_hash = operation.coupon_id, GENESIS
        unkeyed_seal(operation, prev_hash)
        prev_hash = operation.content_hash
        batch.append(operation)
        if len(batch) == 1000:
            CouponOperation.objects.bulk_update(batch, ["prev_hash", "content_hash"])
            batch = []
    CouponOperation.objects.bulk_update(batch, ["prev_hash", "content_hash"])


class Migration(migrations.Migration):
    dependencies = [
        ("coupons", "0005_lease_key_versions"),
    ]

    operations = [
        migrations.AddField(
            model_name='couponoperation',
            name='content_hash',
            field=models.CharField(default='', max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name='couponoperation',
            name='prev_hash',
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.RunPython(backfill_hash_chain, migrations.RunPython.noop),
        pgtrigger.migrations.AddTrigger(
            model_name='commandrejection',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='a07e767e2d3510a7a4952dad3a8b83afbb23e42c', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_fd8d3', table='coupons_commandrejection', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='couponoperation',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='c03d923e5e39c8251694334a9502df67049f04d2', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_90df3', table='coupons_couponoperation', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='inboxmessage',
            trigger=pgtrigger.compiler.Trigger(name='delete_refused', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='379ccaeed4556dab64f55da32d0147972eebea12', operation='DELETE', pgid='pgtrigger_delete_refused_a7328', table='coupons_inboxmessage', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='inboxmessage',
            trigger=pgtrigger.compiler.Trigger(name='frozen_columns', sql=pgtrigger.compiler.UpsertTriggerSql(condition="WHEN (to_jsonb(OLD) - '{outcome}'::text[] IS DISTINCT FROM to_jsonb(NEW) - '{outcome}'::text[])", func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='3fba1bb2403c99e333282074d059ee62a9c642b1', operation='UPDATE', pgid='pgtrigger_frozen_columns_f4d44', table='coupons_inboxmessage', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='inboxmessage',
            trigger=pgtrigger.compiler.Trigger(name='outcome_set_once', sql=pgtrigger.compiler.UpsertTriggerSql(condition="WHEN (OLD.outcome <> '{}'::jsonb AND OLD.outcome IS DISTINCT FROM NEW.outcome)", func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='b952fad000b3c3b888ec55edde35c8b5b6828d51', operation='UPDATE', pgid='pgtrigger_outcome_set_once_9114b', table='coupons_inboxmessage', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='outboxevent',
            trigger=pgtrigger.compiler.Trigger(name='delete_refused', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='0ac4cfa56348d6797dbeabe79244cf475fefd3ae', operation='DELETE', pgid='pgtrigger_delete_refused_2926c', table='coupons_outboxevent', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='outboxevent',
            trigger=pgtrigger.compiler.Trigger(name='frozen_columns', sql=pgtrigger.compiler.UpsertTriggerSql(condition="WHEN (to_jsonb(OLD) - '{published_at}'::text[] IS DISTINCT FROM to_jsonb(NEW) - '{published_at}'::text[])", func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='a69544ef694289d814f76918868535097470ce76', operation='UPDATE', pgid='pgtrigger_frozen_columns_2bfc5', table='coupons_outboxevent', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='outboxevent',
            trigger=pgtrigger.compiler.Trigger(name='published_once', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (OLD."published_at" IS DISTINCT FROM (NEW."published_at") AND OLD."published_at" IS NOT NULL)', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='65c3ad3c2f74b1d89bc0e368e1b0f03f51fd3c59', operation='UPDATE', pgid='pgtrigger_published_once_959cb', table='coupons_outboxevent', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='redemption',
            trigger=pgtrigger.compiler.Trigger(name='delete_refused', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='ca61b4bc1de054b723939062fb2dbe1b360f39f4', operation='DELETE', pgid='pgtrigger_delete_refused_269a9', table='coupons_redemption', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='redemption',
            trigger=pgtrigger.compiler.Trigger(name='frozen_columns', sql=pgtrigger.compiler.UpsertTriggerSql(condition="WHEN (to_jsonb(OLD) - '{succeeded}'::text[] IS DISTINCT FROM to_jsonb(NEW) - '{succeeded}'::text[])", func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='ba78ee1b4d42110bda07fb41b1d730145965bb4e', operation='UPDATE', pgid='pgtrigger_frozen_columns_b310a', table='coupons_redemption', when='BEFORE')),
        ),
    ]

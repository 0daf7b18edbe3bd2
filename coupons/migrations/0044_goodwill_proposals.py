"""Goodwill coupons: the proposals table (evidence from day one: opens PROPOSED, decided once,
then frozen; never deleted) and the two capabilities, support proposing and operators deciding."""

import django.db.models.deletion
import pgtrigger.compiler
import pgtrigger.migrations
from django.contrib.auth.management import create_permissions
from django.db import migrations, models

import coupons.models.trigger_sql

# Frozen copy of who gets the new capabilities (coupons.capabilities.GROUPS as of this migration).
GRANTS = {"support": ["propose_goodwill"], "operator": ["propose_goodwill", "approve_goodwill"]}


def grant(apps, schema_editor):
    coupons_config = apps.get_app_config("coupons")
    coupons_config.models_module = True
    create_permissions(coupons_config, apps=apps, verbosity=0)
    coupons_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in GRANTS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*Permission.objects.filter(
            content_type__app_label="coupons", content_type__model="usercoupon",
            codename__in=codenames))


class Migration(migrations.Migration):

    dependencies = [
        ('coupons', '0043_customer_directory'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='usercoupon',
            options={'permissions': [('read_coupons', 'Read coupons, their history, checks and timelines'), ('issue_coupon', 'Issue coupons to users'), ('lock_coupon', 'Lock coupons for orders'), ('renew_coupon', "Renew an order's coupon lease"), ('redeem_coupon', 'Redeem a locked coupon'), ('release_coupon', "Release an order's coupon lease"), ('void_coupon', 'Void coupons (with a reason)'), ('manage_templates', 'Create and edit coupon templates'), ('post_facts', 'Send order, payment and refund facts'), ('send_refunds', 'Send refunds for a coupon decision'), ('resolve_cases', 'See and resolve conflict cases'), ('view_case_details', 'See case notes and compensation amounts'), ('approve_refunds', 'Approve or reject refund decisions'), ('propose_compensation', 'Propose compensations'), ('approve_compensation', "Approve or reject others' compensations"), ('edit_policies', 'Edit and publish return policies'), ('propose_goodwill', 'Propose goodwill coupons for customers'), ('approve_goodwill', "Approve or reject others' goodwill coupons")]},
        ),
        migrations.CreateModel(
            name='GoodwillProposal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('status', models.CharField(choices=[('PROPOSED', 'Proposed'), ('APPROVED', 'Approved'), ('REJECTED', 'Rejected')], default='PROPOSED', max_length=16)),
                ('user_id', models.CharField(db_index=True, max_length=64)),
                ('answers', models.CharField(max_length=64)),
                ('reason', models.CharField(max_length=500)),
                ('created_by', models.CharField(help_text='Who proposed it.', max_length=128)),
                ('created_at', models.DateTimeField()),
                ('idempotency_key', models.CharField(blank=True, max_length=255)),
                ('request_hash', models.CharField(blank=True, max_length=64)),
                ('decided_by', models.CharField(blank=True, max_length=128)),
                ('decided_at', models.DateTimeField(blank=True, null=True)),
                ('decision_note', models.CharField(blank=True, max_length=1000)),
                ('coupon', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='goodwill_proposals', to='coupons.usercoupon')),
                ('issued_coupon', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='goodwill_proposal', to='coupons.usercoupon')),
                ('template', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='coupons.coupontemplate')),
            ],
            options={
                'constraints': [models.UniqueConstraint(condition=models.Q(('status', 'REJECTED'), _negated=True), fields=('user_id', 'answers'), name='one_goodwill_per_customer_case')],
            },
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='goodwillproposal',
            trigger=pgtrigger.compiler.Trigger(name='delete_refused', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='35aa2c948c6dfd211505d7ba699d0b9ce8325a3c', operation='DELETE', pgid='pgtrigger_delete_refused_eb046', table='coupons_goodwillproposal', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='goodwillproposal',
            trigger=pgtrigger.compiler.Trigger(name='truncate_refused', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table', TG_TABLE_NAME;", hash='15facc7e9b63742109e55404e4fb27bd79993354', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_truncate_refused_e0739', table='coupons_goodwillproposal', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='goodwillproposal',
            trigger=pgtrigger.compiler.Trigger(name='frozen_once_closed', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (OLD.status NOT IN ('PROPOSED') AND (to_jsonb(OLD) - '{}'::text[] IS DISTINCT FROM to_jsonb(NEW) - '{}'::text[]))", func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='d737f3b7e89974e310edc5cd176dee6faa55bb9d', operation='UPDATE', pgid='pgtrigger_frozen_once_closed_94b90', table='coupons_goodwillproposal', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='goodwillproposal',
            trigger=pgtrigger.compiler.Trigger(name='status_opens', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (NEW.status NOT IN ('PROPOSED'))", func="RAISE EXCEPTION 'coupons: % rows open only in their first status', TG_TABLE_NAME USING DETAIL = format('status %s', NEW.status);", hash='ae579422948895ca793f05022e1573031ba17af2', operation='INSERT', pgid='pgtrigger_status_opens_f7ce2', table='coupons_goodwillproposal', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='goodwillproposal',
            trigger=pgtrigger.compiler.Trigger(name='status_moves', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(condition="WHEN (OLD.status IS DISTINCT FROM NEW.status AND (OLD.status, NEW.status) NOT IN (('PROPOSED', 'APPROVED'), ('PROPOSED', 'REJECTED')))", func="RAISE EXCEPTION 'coupons: % status moves only one step forward', TG_TABLE_NAME USING DETAIL = format('status %s to %s', OLD.status, NEW.status);", hash='e64d8f3468ced7839ceb269ad7232e0d4df38965', operation='UPDATE', pgid='pgtrigger_status_moves_ba00d', table='coupons_goodwillproposal', when='BEFORE')),
        ),
        migrations.RunPython(grant, migrations.RunPython.noop),
    ]

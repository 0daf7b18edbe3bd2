"""Return policies: versioned rules, published versions frozen, and the default policy."""

from datetime import UTC, datetime

import django.db.models.deletion
import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models

# Dated before any coupon existed, so every refund finds a version in force at its time.
DEFAULT_SINCE = datetime(2020, 1, 1, tzinfo=UTC)

# Frozen copy of the default policy as shipped; later changes are new versions, made by a
# policy admin (or a migration of their own). First match wins, so the order is the policy:
# exchange coupons and non-returnable templates never come back, then partial refunds keep the
# coupon used, a risk-flagged refund waits for a person, and only then does a full refund within
# 30 days return the coupon (past valid_until the executor lands it in EXPIRED).
DEFAULT_RULES = [
    {"label": "Exchange coupons are one-time: they stay used",
     "when": {"template_kind": ["EXCHANGE"]}, "action": "KEEP_USED",
     "requires_approval": False, "compensation": {}},
    {"label": "The template says its coupons are not returned",
     "when": {"template_returnable": False}, "action": "KEEP_USED",
     "requires_approval": False, "compensation": {}},
    {"label": "Partial refunds keep the coupon used",
     "when": {"refund_type": "PARTIAL"}, "action": "KEEP_USED",
     "requires_approval": False, "compensation": {}},
    {"label": "Risk-flagged refunds are reviewed by an operator",
     "when": {"risk_flag": True}, "action": "MANUAL_REVIEW",
     "requires_approval": True, "compensation": {}},
    {"label": "Full refund within 30 days of redemption returns the coupon",
     "when": {"refund_type": "FULL", "days_since_redemption_max": 30}, "action": "RETURN",
     "requires_approval": False, "compensation": {}},
    {"label": "Otherwise the coupon stays used",
     "when": {}, "action": "KEEP_USED", "requires_approval": False, "compensation": {}},
]


def add_default_policy(apps, schema_editor):
    ReturnPolicy = apps.get_model("refunds", "ReturnPolicy")
    ReturnPolicyVersion = apps.get_model("refunds", "ReturnPolicyVersion")
    policy = ReturnPolicy.objects.create(
        code="default", name="Default return policy", created_at=DEFAULT_SINCE
    )
    ReturnPolicyVersion.objects.create(
        policy=policy, number=1, status="PUBLISHED", rules=DEFAULT_RULES,
        created_by="migration", created_at=DEFAULT_SINCE,
        published_by="migration", published_at=DEFAULT_SINCE,
    )


def remove_default_policy(apps, schema_editor):
    # Only reached when the tables are about to be dropped; the trigger refuses deleting a
    # published row, so the tables go with their rows.
    pass


class Migration(migrations.Migration):
    dependencies = [
        ("refunds", "0001_initial"),
        ("coupons", "0006_ledger_hash_chain"),
    ]

    operations = [
        migrations.CreateModel(
            name='ReturnPolicy',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.SlugField(max_length=64, unique=True)),
                ('name', models.CharField(max_length=200)),
                ('created_at', models.DateTimeField()),
            ],
            options={
                'verbose_name_plural': 'return policies',
                'ordering': ['code'],
            },
        ),
        migrations.CreateModel(
            name='ReturnPolicyVersion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('number', models.PositiveIntegerField()),
                ('status', models.CharField(choices=[('DRAFT', 'Draft'), ('PUBLISHED', 'Published')], default='DRAFT', max_length=16)),
                ('rules', models.JSONField(default=list)),
                ('created_by', models.CharField(max_length=128)),
                ('created_at', models.DateTimeField()),
                ('published_by', models.CharField(blank=True, default='', max_length=128)),
                ('published_at', models.DateTimeField(blank=True, null=True)),
                ('based_on', models.ForeignKey(blank=True, help_text='The version this draft was copied from.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='refunds.returnpolicyversion')),
                ('policy', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='versions', to='refunds.returnpolicy')),
            ],
            options={
                'ordering': ['policy', 'number'],
                'indexes': [models.Index(fields=['policy', 'status', 'published_at'], name='policy_published_idx')],
                'constraints': [models.UniqueConstraint(fields=('policy', 'number'), name='policy_version_unique'), models.UniqueConstraint(condition=models.Q(('status', 'DRAFT')), fields=('policy',), name='one_draft_per_policy'), models.CheckConstraint(condition=models.Q(models.Q(('published_at__isnull', True), ('status', 'DRAFT')), models.Q(('published_at__isnull', False), ('status', 'PUBLISHED')), _connector='OR'), name='published_version_has_time')],
            },
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='returnpolicyversion',
            trigger=pgtrigger.compiler.Trigger(name='published_policy_version_frozen', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (OLD."status" = \'PUBLISHED\')', func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='cceef1ff435b8ead5c97ae5691a7fe97715f7246', operation='UPDATE OR DELETE', pgid='pgtrigger_published_policy_version_frozen_086c3', table='refunds_returnpolicyversion', when='BEFORE')),
        ),
        migrations.RunPython(add_default_policy, remove_default_policy),
    ]

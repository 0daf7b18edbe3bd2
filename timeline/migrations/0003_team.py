"""Staff notes, the view log and saved filters, and the console's own
capabilities granted to the console's roles."""

import coupons.models.trigger_sql
import django.db.models.deletion
import pgtrigger.compiler
import pgtrigger.migrations
from django.conf import settings
from django.contrib.auth.management import create_permissions
from django.db import migrations, models


# Frozen copy of timeline.capabilities.CONSOLE_GROUPS as of this migration.
CONSOLE_GROUPS = {
    "support": ["add_notes"],
    "operator": ["add_notes", "view_activity", "export_lists"],
    "policy_admin": ["view_activity"],
}


def grant_console_capabilities(apps, schema_editor):
    # Permissions are normally made after all migrations; the groups need them now.
    timeline_config = apps.get_app_config("timeline")
    timeline_config.models_module = True
    create_permissions(timeline_config, apps=apps, verbosity=0)
    timeline_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in CONSOLE_GROUPS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*Permission.objects.filter(
            content_type__app_label="timeline", codename__in=codenames))


class Migration(migrations.Migration):

    dependencies = [
        ('timeline', '0002_time_zone'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ('coupons', '0003_capabilities'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.CreateModel(
            name='SavedFilter',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('page', models.CharField(max_length=32)),
                ('name', models.CharField(max_length=80)),
                ('query', models.CharField(max_length=500)),
                ('created_at', models.DateTimeField()),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='saved_filters', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['name', 'id'],
            },
        ),
        migrations.CreateModel(
            name='StaffNote',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('seal', models.CharField(blank=True, max_length=100)),
                ('coupon_id', models.BigIntegerField()),
                ('author', models.CharField(max_length=128)),
                ('text', models.TextField(max_length=4000)),
                ('form_key', models.CharField(max_length=64, unique=True)),
                ('created_at', models.DateTimeField()),
                ('replaces', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='replaced_by', to='timeline.staffnote')),
            ],
            options={
                'permissions': [('add_notes', 'Write staff notes on coupons'), ('view_activity', 'See who viewed, did and was refused what'), ('export_lists', 'Export search results and queues as CSV')],
                'default_permissions': (),
            },
        ),
        migrations.CreateModel(
            name='ViewRecord',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('seal', models.CharField(blank=True, max_length=100)),
                ('actor', models.CharField(max_length=128)),
                ('kind', models.CharField(choices=[('VIEW', 'view'), ('EXPORT', 'export')], default='VIEW', max_length=8)),
                ('page', models.CharField(max_length=32)),
                ('path', models.CharField(max_length=500)),
                ('coupon_id', models.BigIntegerField(blank=True, null=True)),
                ('created_at', models.DateTimeField()),
            ],
            options={
                'indexes': [models.Index(fields=['actor', 'created_at'], name='view_actor_time'), models.Index(fields=['coupon_id', 'created_at'], name='view_coupon_time'), models.Index(fields=['created_at'], name='view_time')],
            },
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='viewrecord',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='775366316d6f69eabd97d28961a0e73a6405b8ea', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_6e611', table='timeline_viewrecord', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='viewrecord',
            trigger=pgtrigger.compiler.Trigger(name='truncate_refused', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table', TG_TABLE_NAME;", hash='1b70b630c9dee52ac2a22726acc7dd236f9e786a', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_truncate_refused_44fc6', table='timeline_viewrecord', when='BEFORE')),
        ),
        migrations.AddConstraint(
            model_name='savedfilter',
            constraint=models.UniqueConstraint(fields=('user', 'page', 'name'), name='saved_filter_name_once'),
        ),
        migrations.AddIndex(
            model_name='staffnote',
            index=models.Index(fields=['coupon_id', 'created_at'], name='note_coupon_time'),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='staffnote',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='de0051a03369b92e703bfd849e3d3a9603e1d70a', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_b633b', table='timeline_staffnote', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='staffnote',
            trigger=pgtrigger.compiler.Trigger(name='truncate_refused', sql=coupons.models.trigger_sql.UnswitchableTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table', TG_TABLE_NAME;", hash='11bfd642657a040166766b307c990b7a6637d7c6', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_truncate_refused_a1b05', table='timeline_staffnote', when='BEFORE')),
        ),
        migrations.RunPython(grant_console_capabilities, migrations.RunPython.noop),
    ]

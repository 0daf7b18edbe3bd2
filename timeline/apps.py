from django.apps import AppConfig
from django.apps import apps as global_apps
from django.db.models.signals import post_migrate


def restore_console_grants(sender, apps=None, using="default", **kwargs):
    """Give the console's roles their console capabilities again when a flush emptied them.

    Migration 0003_team grants them; `flush` (and every transactional test) empties all tables,
    and coupons' own handler makes the groups again with the domain's capabilities only. Only
    when no group holds any console capability are they granted: a group an admin changed is
    left as it is.
    """
    apps = apps or global_apps
    from timeline.capabilities import CONSOLE_GROUPS, ConsoleCapability

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    console = Permission.objects.using(using).filter(
        content_type__app_label="timeline", codename__in=[c.value for c in ConsoleCapability])
    if Group.objects.using(using).filter(permissions__in=console).exists():
        return
    for name, capabilities in CONSOLE_GROUPS.items():
        group, _ = Group.objects.using(using).get_or_create(name=name)
        group.permissions.add(*console.filter(codename__in=[c.value for c in capabilities]))


class ConsoleConfig(AppConfig):
    """The staff console: pages over a coupon's merged history, queues and policies.

    The label stays `timeline`, the app's first name: its tables, migrations and permission
    codenames (timeline.<capability>) keep it.
    """

    name = "timeline"
    label = "timeline"

    def ready(self):
        # Connects the sign-in receiver that puts the person's time zone in their session.
        # A stored sentence's fact (a ledger reason's "OrderClosed") read in the reader's words.
        from coupons import sentences
        from timeline import time_zones  # noqa: F401
        from timeline.glossary import fact_text
        sentences.VALUE_WORDS.setdefault("fact", fact_text)

        # Runs after auth made this app's permissions and coupons made the groups.
        post_migrate.connect(restore_console_grants, sender=self,
                             dispatch_uid="timeline.restore_console_grants")

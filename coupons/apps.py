from django.apps import AppConfig
from django.apps import apps as global_apps
from django.db.models.signals import post_migrate


def restore_roles(sender, apps=None, using="default", **kwargs):
    """Make the console's groups again when a flush emptied every table.

    Migration 0003 makes them; `manage.py flush` and every transactional test empty all tables
    and then send post_migrate, so without this a flushed database has no roles. An existing
    group is left as it is: an admin may have changed it.
    """
    apps = apps or global_apps  # `migrate` passes its state's apps; `flush` passes none
    from coupons.capabilities import GROUPS

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, capabilities in GROUPS.items():
        group, created = Group.objects.using(using).get_or_create(name=name)
        if created:
            group.permissions.add(*Permission.objects.using(using).filter(
                content_type__app_label="coupons", content_type__model="usercoupon",
                codename__in=[c.value for c in capabilities],
            ))


class CouponsConfig(AppConfig):
    name = "coupons"
    verbose_name = "Coupons"

    def ready(self):
        # Connected for this app only, so it runs after auth made this app's permissions.
        post_migrate.connect(restore_roles, sender=self, dispatch_uid="coupons.restore_roles")

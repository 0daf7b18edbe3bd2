from importlib import import_module

from django.apps import AppConfig
from django.apps import apps as global_apps
from django.db.models.signals import post_migrate


def restore_default_policy(sender, apps=None, using="default", **kwargs):
    """Ship the default return policy again when a flush emptied every table (see
    coupons.apps.restore_roles); refunds decide under it when a template names none."""
    apps = apps or global_apps
    ReturnPolicy = apps.get_model("refunds", "ReturnPolicy")
    if not ReturnPolicy.objects.using(using).filter(code="default").exists():
        import_module("refunds.migrations.0002_return_policies").add_default_policy(apps, None)


class RefundsConfig(AppConfig):
    """Refund decisions, return policies and compensations."""

    name = "refunds"

    def ready(self):
        # The core's hooks need after-sale's models and services, loaded only now.
        from refunds.core_hooks import install

        install()
        post_migrate.connect(restore_default_policy, sender=self,
                             dispatch_uid="refunds.restore_default_policy")

"""Capabilities as permissions, the console's groups, and grants for service clients."""

from django.contrib.auth.management import create_permissions
from django.db import migrations, models

CAPABILITIES = [
    ("read_coupons", "Read coupons, their history, checks and timelines"),
    ("issue_coupon", "Issue coupons to users"),
    ("lock_coupon", "Lock coupons for orders"),
    ("renew_coupon", "Renew an order's coupon lease"),
    ("redeem_coupon", "Redeem a locked coupon"),
    ("release_coupon", "Release an order's coupon lease"),
    ("void_coupon", "Void coupons (with a reason)"),
    ("manage_templates", "Create and edit coupon templates"),
    ("post_facts", "Send order, payment and refund facts"),
    ("send_refunds", "Send refunds for a coupon decision"),
    ("resolve_cases", "See and resolve conflict cases"),
    ("view_case_details", "See case notes and compensation amounts"),
    ("approve_refunds", "Approve or reject refund decisions"),
    ("propose_compensation", "Propose compensations"),
    ("approve_compensation", "Approve or reject others' compensations"),
    ("edit_policies", "Edit and publish return policies"),
]

# Frozen copy of coupons.capabilities.GROUPS as of this migration; later changes to the roles
# come as migrations of their own.
GROUPS = {
    "support": ["read_coupons"],
    "operator": [
        "read_coupons", "void_coupon", "resolve_cases", "view_case_details", "approve_refunds",
        "propose_compensation", "approve_compensation",
    ],
    "policy_admin": ["read_coupons", "manage_templates", "edit_policies"],
}

# What clients made before this migration could do (everything); see the README to narrow them.
EVERY_CLIENT_GRANT = [
    "read_coupons", "issue_coupon", "lock_coupon", "renew_coupon", "redeem_coupon",
    "release_coupon", "void_coupon", "manage_templates", "send_refunds",
]
EVERY_FACT_TYPE = [
    "DepositPaid", "FinalPaymentSucceeded", "OrderClosed", "PaymentFailed", "PaymentSucceeded",
    "RefundSucceeded",
]


def make_groups(apps, schema_editor):
    # Permissions are normally made after all migrations; the groups need them now.
    coupons_config = apps.get_app_config("coupons")
    coupons_config.models_module = True
    create_permissions(coupons_config, apps=apps, verbosity=0)
    coupons_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    Permission.objects.filter(
        content_type__app_label="coupons", codename="resolve_conflictcase"
    ).delete()
    for name, codenames in GROUPS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*Permission.objects.filter(
            content_type__app_label="coupons", content_type__model="usercoupon",
            codename__in=codenames,
        ))

    ServiceClient = apps.get_model("coupons", "ServiceClient")
    ServiceClient.objects.update(capabilities=EVERY_CLIENT_GRANT, fact_types=EVERY_FACT_TYPE)


class Migration(migrations.Migration):
    dependencies = [
        ("coupons", "0002_conflictcase_inboxmessage_orderfact_and_more"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="conflictcase",
            options={"ordering": ["-opened_at", "-id"]},
        ),
        migrations.AlterModelOptions(
            name="usercoupon",
            options={"permissions": CAPABILITIES},
        ),
        migrations.AddField(
            model_name="serviceclient",
            name="capabilities",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="serviceclient",
            name="fact_types",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(make_groups, migrations.RunPython.noop),
    ]

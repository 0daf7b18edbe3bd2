import json

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Max, Q
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons.admin import ReadOnlyAdmin
from coupons.capabilities import Capability
from coupons.errors import CouponError, ValidationFailed
from refunds.models import Compensation, RefundCoupon, ReturnPolicy, ReturnPolicyVersion
from refunds.policy_engine import clean_rules
from refunds.services.policies import (
    policy_create,
    policy_draft_create,
    policy_draft_update,
    policy_publish,
)


@admin.register(Compensation)
class CompensationAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "status", "order_id", "coupon", "amount", "created_at"]
    list_filter = ["kind", "status"]
    search_fields = ["order_id"]


def actor_of(request) -> str:
    return f"user:{request.user.get_username()}"


def flatten(details, path=()) -> list[str]:
    """`{"2": {"when": {"risk_flag": ["must be true or false"]}}}` as readable lines."""
    if isinstance(details, dict):
        return [line for key, value in details.items()
                for line in flatten(value, (*path, key))]
    where = " › ".join(f"rule {part}" if part.isdigit() else part for part in path)
    return [f"{where}: {message}" if where else str(message) for message in details]


class PolicyAdminMixin:
    """Who sees and who edits: capabilities, never staff status or model permissions."""

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm(Capability.READ.perm) or self.can_edit(request)

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_delete_permission(self, request, obj=None):
        return False  # decisions name these rows

    def has_edit_policies_permission(self, request):
        return self.can_edit(request)

    @staticmethod
    def can_edit(request) -> bool:
        return request.user.is_active and request.user.has_perm(Capability.EDIT_POLICIES.perm)


class VersionInline(admin.TabularInline):
    model = ReturnPolicyVersion
    fields = ["number", "status", "based_on", "created_by", "published_by", "published_at"]
    readonly_fields = fields
    extra = 0
    show_change_link = True
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_view_permission(self, request, obj=None):
        return True  # shown inside the policy page, which checks its own permission


class PolicyForm(forms.ModelForm):
    class Meta:
        model = ReturnPolicy
        fields = ["code", "name"]


@admin.register(ReturnPolicy)
class ReturnPolicyAdmin(PolicyAdminMixin, admin.ModelAdmin):
    """Adding makes the policy and a first draft copied from the default policy."""

    form = PolicyForm
    list_display = ["code", "name", "current_version", "draft_version", "created_at"]
    search_fields = ["code", "name"]
    inlines = [VersionInline]
    actions = ["start_draft"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            current=Max("versions__number", filter=Q(versions__status="PUBLISHED")),
            draft=Max("versions__number", filter=Q(versions__status="DRAFT")),
        )

    @admin.display(description=_("published version"), ordering="current")
    def current_version(self, policy):
        return policy.current

    @admin.display(description=_("draft"), ordering="draft")
    def draft_version(self, policy):
        return policy.draft

    def has_add_permission(self, request):
        return self.can_edit(request)

    def has_change_permission(self, request, obj=None):
        # The policy row has nothing to edit; the page is read-only with its versions.
        return False

    def save_model(self, request, obj, form, change):
        policy = policy_create(code=form.cleaned_data["code"], name=form.cleaned_data["name"],
                               actor=actor_of(request))
        obj.pk = policy.pk

    @admin.action(description=_("Start a draft from the latest version"),
                  permissions=["edit_policies"])
    def start_draft(self, request, queryset):
        for policy in queryset:
            try:
                draft = policy_draft_create(policy, actor_of(request))
            except CouponError as error:
                self.message_user(request, gettext("%(policy)s: %(problem)s")
                                  % {"policy": policy, "problem": error.message},
                                  messages.WARNING)
            else:
                self.message_user(request, gettext("%(policy)s: draft v%(number)s started.")
                                  % {"policy": policy, "number": draft.number})


class DraftRulesForm(forms.ModelForm):
    rules = forms.JSONField(widget=forms.Textarea(attrs={"rows": 30, "cols": 100}),
                            help_text=_("An ordered list of rules; first match wins; the last "
                                        "rule has no conditions. See docs/after-sale.md."))

    class Meta:
        model = ReturnPolicyVersion
        fields = ["rules"]

    def clean_rules(self):
        rules = self.cleaned_data["rules"]
        try:
            return clean_rules(rules)
        except ValidationFailed as error:
            raise forms.ValidationError(flatten(error.details.get("rules", []))) from None


@admin.register(ReturnPolicyVersion)
class ReturnPolicyVersionAdmin(PolicyAdminMixin, admin.ModelAdmin):
    """Published versions are read-only; a draft's rules change only through the service."""

    form = DraftRulesForm
    list_display = ["policy", "number", "status", "based_on", "created_by", "published_at"]
    list_filter = ["status", "policy"]
    list_select_related = ["policy", "based_on__policy"]
    actions = ["publish"]
    readonly_fields = ["policy", "number", "status", "based_on", "created_by", "created_at",
                       "published_by", "published_at", "rules_json"]

    def get_fields(self, request, obj=None):
        if obj is not None and self.has_change_permission(request, obj):
            return [*self.readonly_fields[:-1], "rules"]
        return self.readonly_fields

    @admin.display(description=_("rules"))
    def rules_json(self, version):
        return format_html("<pre>{}</pre>", json.dumps(version.rules, indent=2,
                                                        ensure_ascii=False))

    def has_add_permission(self, request):
        return False  # drafts start from a policy ("Start a draft from the latest version")

    def has_change_permission(self, request, obj=None):
        if not self.can_edit(request):
            return False
        return obj is None or obj.status == ReturnPolicyVersion.Status.DRAFT

    def save_model(self, request, obj, form, change):
        try:
            policy_draft_update(obj.pk, form.cleaned_data["rules"], actor_of(request))
        except CouponError as error:
            # Published between loading the form and saving it.
            raise PermissionDenied(error.message) from error

    @admin.action(description=_("Publish selected drafts"), permissions=["edit_policies"])
    def publish(self, request, queryset):
        for version in queryset:
            try:
                policy_publish(version, actor_of(request))
            except CouponError as error:
                self.message_user(request, gettext("%(version)s: %(problem)s")
                                  % {"version": version, "problem": error.message},
                                  messages.WARNING)
            else:
                self.message_user(request, gettext("%(policy)s v%(number)s published.")
                                  % {"policy": version.policy, "number": version.number})


@admin.register(RefundCoupon)
class RefundCouponAdmin(ReadOnlyAdmin):
    """Read only: decisions change through the refund services (approve / reject)."""

    list_display = ["id", "refund_id", "order_id", "coupon", "action", "status", "coupon_share",
                    "policy_version", "received_at"]
    list_filter = ["status", "action"]
    search_fields = ["refund_id", "order_id"]

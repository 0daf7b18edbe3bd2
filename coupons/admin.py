from django import forms
from django.contrib import admin

from coupons import models
from coupons.capabilities import Capability
from coupons.errors import ValidationFailed
from coupons.redaction import detail_fields
from coupons.services import template_create, template_update
from coupons.services.templates import template_set_issuable, validate_terms


class CapabilityAdmin(admin.ModelAdmin):
    """A staff session may do in the admin exactly what its groups' capabilities allow.

    `is_staff` only lets a person sign in; Django's own add/change/view model permissions are
    not consulted, so a stray one cannot widen a role. Viewing needs READ; adding or changing
    needs the capability a subclass names, and nobody deletes (history is appended, never
    edited). A superuser holds every capability, so a model without one stays read-only even
    for them. Fields coupons.redaction keeps for VIEW_CASE_DETAILS are left out for others.
    """

    view_capability = Capability.READ
    add_capability: Capability | None = None
    change_capability: Capability | None = None

    @staticmethod
    def _holds(request, capability) -> bool:
        return capability is not None and request.user.has_perm(capability.perm)

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_view_permission(self, request, obj=None):
        return self._holds(request, self.view_capability)

    def has_add_permission(self, request, obj=None):
        return self._holds(request, self.add_capability)

    def has_change_permission(self, request, obj=None):
        return self._holds(request, self.change_capability)

    def has_delete_permission(self, request, obj=None):
        return False

    def hidden_fields(self, request, obj=None) -> tuple:
        if self._holds(request, Capability.VIEW_CASE_DETAILS) or not hasattr(
                self.model, "detail_fields"):
            return ()
        return detail_fields(self.model, op_type=getattr(obj, "op_type", None))

    def get_exclude(self, request, obj=None):
        return [*(super().get_exclude(request, obj) or ()), *self.hidden_fields(request, obj)]

    def get_list_display(self, request):
        hidden = self.hidden_fields(request)
        return [name for name in super().get_list_display(request) if name not in hidden]


# History and state are changed by coupons.services only; the admin just shows them.
ReadOnlyAdmin = CapabilityAdmin


class CouponTemplateForm(forms.ModelForm):
    """Shows the service's term problems beside their fields, before anything is saved."""

    def clean(self):
        cleaned = super().clean()
        try:
            validate_terms({field: cleaned.get(field)
                            for field in models.CouponTemplate.TERM_FIELDS})
        except ValidationFailed as error:
            for field, problem in error.details.items():
                if field not in self.errors:  # a field's own error says it already
                    self.add_error(field, problem)
        return cleaned


@admin.register(models.CouponTemplate)
class CouponTemplateAdmin(CapabilityAdmin):
    form = CouponTemplateForm
    add_capability = change_capability = Capability.MANAGE_TEMPLATES
    list_display = ["code", "name", "kind", "version", "expiry_during_lock", "updated_at"]
    search_fields = ["code", "name"]
    readonly_fields = ["version", "created_at", "updated_at"]
    fields = ["code", *models.CouponTemplate.TERM_FIELDS, "issuable", *readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        return [*self.readonly_fields, "code"] if obj else self.readonly_fields

    def save_model(self, request, obj, form, change):
        terms = {field: form.cleaned_data[field] for field in models.CouponTemplate.TERM_FIELDS}
        # The service freezes every edit as a new version; issued coupons keep theirs.
        saved = (template_update(template_id=obj.pk, **terms) if change
                 else template_create(code=form.cleaned_data["code"], **terms))
        if form.cleaned_data["issuable"] != saved.issuable:
            saved = template_set_issuable(template_id=saved.pk,
                                          issuable=form.cleaned_data["issuable"])
        obj.pk, obj.version = saved.pk, saved.version

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "return_policy":
            # Only a policy with a published version can be named (the service checks it too).
            kwargs["queryset"] = db_field.related_model.objects.filter(
                versions__status="PUBLISHED").distinct()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(models.CouponTemplateVersion)
class CouponTemplateVersionAdmin(ReadOnlyAdmin):
    list_display = ["template", "version", "kind", "face_value", "percent_off", "created_at"]
    list_filter = ["kind"]


@admin.register(models.UserCoupon)
class UserCouponAdmin(ReadOnlyAdmin):
    list_display = ["id", "user_id", "template", "status", "state_version", "locked_order_id",
                    "valid_until"]
    list_filter = ["status"]
    search_fields = ["=id", "user_id", "locked_order_id"]
    exclude = ["lock_token_hash"]


@admin.register(models.CouponLock)
class CouponLockAdmin(ReadOnlyAdmin):
    list_display = ["id", "coupon", "order_id", "status", "locked_at", "expires_at"]
    list_filter = ["status"]
    search_fields = ["order_id", "=coupon__id"]
    exclude = ["token_hash"]


@admin.register(models.OrderCoupon)
class OrderCouponAdmin(ReadOnlyAdmin):
    list_display = ["order_id", "coupon", "quote_id", "order_amount", "discount_amount"]
    search_fields = ["order_id"]


@admin.register(models.Redemption)
class RedemptionAdmin(ReadOnlyAdmin):
    list_display = ["id", "coupon", "order_id", "payment_id", "discount_amount", "succeeded",
                    "created_at"]
    search_fields = ["order_id", "payment_id", "=coupon__id"]


@admin.register(models.CouponOperation)
class CouponOperationAdmin(ReadOnlyAdmin):
    list_display = ["id", "coupon", "op_type", "from_state", "to_state", "to_version", "actor",
                    "order_id", "created_at"]
    list_filter = ["op_type"]
    search_fields = ["=coupon__id", "order_id", "payment_id", "idempotency_key"]


@admin.register(models.CommandRejection)
class CommandRejectionAdmin(ReadOnlyAdmin):
    list_display = ["id", "op_type", "coupon_id_ref", "order_id", "actor", "error_code",
                    "created_at"]
    list_filter = ["error_code", "op_type"]
    search_fields = ["=coupon_id_ref", "order_id"]


@admin.register(models.OutboxEvent)
class OutboxEventAdmin(ReadOnlyAdmin):
    list_display = ["id", "event_type", "coupon", "created_at", "published_at"]
    list_filter = ["event_type"]


@admin.register(models.IdempotencyRecord)
class IdempotencyRecordAdmin(ReadOnlyAdmin):
    list_display = ["scope", "key", "status", "response_status", "claimed_at"]
    search_fields = ["key"]


@admin.register(models.ServiceClient)
class ServiceClientAdmin(admin.ModelAdmin):
    """Superusers only: a key prefix and a client's grants help whoever tries to pose as it.

    A superuser may switch a client off; keys and grants are made by
    `manage.py create_service_client`, the key shown once.
    """

    list_display = ["name", "key_prefix", "is_active", "created_at"]
    fields = ["name", "key_prefix", "capabilities", "fact_types", "is_active", "created_at"]
    readonly_fields = ["name", "key_prefix", "capabilities", "fact_types", "created_at"]

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return self.has_module_permission(request)

    def has_change_permission(self, request, obj=None):
        return self.has_module_permission(request)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(models.InboxMessage)
class InboxMessageAdmin(ReadOnlyAdmin):
    list_display = ["message_id", "fact_type", "order_id", "sender", "received_at"]
    list_filter = ["fact_type"]
    search_fields = ["message_id", "order_id"]


@admin.register(models.OrderFact)
class OrderFactAdmin(ReadOnlyAdmin):
    list_display = ["order_id", "fact_type", "payment_id", "refund_id", "occurred_at"]
    list_filter = ["fact_type"]
    search_fields = ["order_id", "payment_id", "refund_id"]


@admin.register(models.ConflictCase)
class ConflictCaseAdmin(ReadOnlyAdmin):
    """Resolved through POST /api/v1/cases/{id}/resolve, which runs the service commands."""

    list_display = ["id", "coupon", "order_id", "fact_type", "status", "recommendation",
                    "opened_at", "resolved_by"]
    list_filter = ["status", "recommendation"]
    search_fields = ["order_id", "=coupon__id"]


@admin.register(models.PresaleSettlement)
class PresaleSettlementAdmin(ReadOnlyAdmin):
    list_display = ["order_id", "coupon", "strategy", "result", "substitute", "discount_amount",
                    "settled_at"]
    list_filter = ["strategy", "result"]
    search_fields = ["order_id"]


@admin.register(models.FinalPaymentReminder)
class FinalPaymentReminderAdmin(ReadOnlyAdmin):
    """Written by the final-payment window scanner, once per order."""

    list_display = ["id", "coupon", "order_id", "discount_amount", "final_payment_opens_at",
                    "final_payment_deadline", "created_at"]
    search_fields = ["order_id", "=coupon__id"]


@admin.register(models.ExpiryWarning)
class ExpiryWarningAdmin(ReadOnlyAdmin):
    """Written by the presale expiry scanner, once per lease."""

    list_display = ["id", "coupon", "order_id", "strategy", "valid_until",
                    "final_payment_deadline", "created_at"]
    list_filter = ["strategy"]
    search_fields = ["order_id", "=coupon__id"]

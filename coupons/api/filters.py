import django_filters

from api.filters import ExternalIdFilter, IdFilter
from coupons.models import Channel, CouponStatus, CouponTemplate, UserCoupon
from coupons.scope import applies_at_store, applies_to_channel
from coupons.selectors import order_coupon_ids


class ScopeFilters(django_filters.FilterSet):
    """`?store=` and `?channel=`: what applies there, so a scope of every store or every
    channel matches too. `scope_path` leads from the listed row to its terms."""

    scope_path = ""
    store = ExternalIdFilter(method="by_store",
                             help_text="Applies at this store: names it, or every store.")
    channel = django_filters.ChoiceFilter(
        choices=Channel.choices, method="by_channel",
        help_text="Applies to this channel: names it, or every channel.")

    def by_store(self, queryset, name, value):
        return queryset.filter(applies_at_store(value, path=self.scope_path))

    def by_channel(self, queryset, name, value):
        return queryset.filter(applies_to_channel(value, path=self.scope_path))


class CouponFilter(ScopeFilters):
    scope_path = "template_version__"
    user_id = ExternalIdFilter()
    status = django_filters.ChoiceFilter(choices=CouponStatus.choices)
    template_id = IdFilter(field_name="template_id")
    # Coupons the order holds now or ever held (its discount evidence).
    order_id = ExternalIdFilter(method="by_order")

    class Meta:
        model = UserCoupon
        fields = ["user_id", "status", "template_id", "order_id", "store", "channel"]

    def by_order(self, queryset, name, value):
        return queryset.filter(pk__in=order_coupon_ids(value))


class TemplateFilter(ScopeFilters):
    class Meta:
        model = CouponTemplate
        fields = ["store", "channel"]

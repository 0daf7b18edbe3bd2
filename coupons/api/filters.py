import django_filters

from api.filters import ExternalIdFilter, IdFilter
from coupons.models import CouponStatus, UserCoupon
from coupons.selectors import order_coupon_ids


class CouponFilter(django_filters.FilterSet):
    user_id = ExternalIdFilter()
    status = django_filters.ChoiceFilter(choices=CouponStatus.choices)
    template_id = IdFilter(field_name="template_id")
    # Coupons the order holds now or ever held (its discount evidence).
    order_id = ExternalIdFilter(method="by_order")

    class Meta:
        model = UserCoupon
        fields = ["user_id", "status", "template_id", "order_id"]

    def by_order(self, queryset, name, value):
        return queryset.filter(pk__in=order_coupon_ids(value))

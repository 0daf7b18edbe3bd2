import django_filters
from django.db.models import Q

from coupons.models import CouponStatus, UserCoupon


class CouponFilter(django_filters.FilterSet):
    user_id = django_filters.CharFilter(max_length=64)
    status = django_filters.ChoiceFilter(choices=CouponStatus.choices)
    template_id = django_filters.NumberFilter(field_name="template_id", min_value=1,
                                              max_value=2**63 - 1)
    # Coupons the order holds now or ever held (its discount evidence).
    order_id = django_filters.CharFilter(max_length=64, method="by_order")

    class Meta:
        model = UserCoupon
        fields = ["user_id", "status", "template_id", "order_id"]

    def by_order(self, queryset, name, value):
        return queryset.filter(
            Q(locked_order_id=value) | Q(order_links__order_id=value)
        ).distinct()

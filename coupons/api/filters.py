import django_filters

from coupons.models import CouponStatus, OrderCoupon, UserCoupon


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
        # A union of two index reads (the coupon the order holds, every coupon it ever locked)
        # rather than an OR across a join, which PostgreSQL answers by reading every coupon.
        held = UserCoupon.objects.filter(locked_order_id=value).values("pk")
        linked = OrderCoupon.objects.filter(order_id=value).values("coupon_id")
        return queryset.filter(pk__in=held.union(linked))

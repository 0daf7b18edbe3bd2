import django_filters
from drf_spectacular.utils import extend_schema_field

from coupons.models import CouponStatus, UserCoupon
from coupons.selectors import order_coupon_ids

from .identifiers import DatabaseIdFormField, ExternalIdFormField, id_schema

MAX_DB_ID = 2**63 - 1


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_DB_ID})
class IdFilter(django_filters.NumberFilter):
    """A database id: a whole number that fits a bigint (a larger one is a 400, not an error
    from the database); `?coupon_id=` (empty) is a 400, not "no filter"."""

    field_class = DatabaseIdFormField

    def __init__(self, *args, **kwargs):
        super().__init__(*args, min_value=1, max_value=MAX_DB_ID, **kwargs)


@extend_schema_field(id_schema(64))
class ExternalIdFilter(django_filters.CharFilter):
    """An id another service made (an order, a user, a refund): at most 64 characters, taken
    as sent (coupons.api.identifiers)."""

    field_class = ExternalIdFormField

    def __init__(self, *args, **kwargs):
        super().__init__(*args, max_length=64, **kwargs)


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

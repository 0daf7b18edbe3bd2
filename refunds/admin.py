from django.contrib import admin

from coupons.admin import ReadOnlyAdmin
from refunds.models import Compensation, RefundCoupon


@admin.register(Compensation)
class CompensationAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "status", "order_id", "coupon", "amount", "created_at"]
    list_filter = ["kind", "status"]
    search_fields = ["order_id"]


@admin.register(RefundCoupon)
class RefundCouponAdmin(ReadOnlyAdmin):
    """Read only: decisions change through the refund services (approve / reject)."""

    list_display = ["id", "refund_id", "order_id", "coupon", "action", "status", "coupon_share",
                    "policy_version", "received_at"]
    list_filter = ["status", "action"]
    search_fields = ["refund_id", "order_id"]

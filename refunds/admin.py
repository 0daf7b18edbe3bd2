from django.contrib import admin

from coupons.admin import ReadOnlyAdmin
from refunds.models import Compensation


@admin.register(Compensation)
class CompensationAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "status", "order_id", "coupon", "amount", "created_at"]
    list_filter = ["kind", "status"]
    search_fields = ["order_id"]

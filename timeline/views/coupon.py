"""One coupon's page: who holds it now, and everything that happened to it."""

from django.http import Http404
from django.shortcuts import render

from coupons.errors import NotFound
from coupons.selectors import coupon_get
from timeline.views.access import ConsolePage


class CouponPage(ConsolePage):
    def get(self, request, coupon_id: int):
        try:
            coupon = coupon_get(coupon_id=coupon_id)
        except NotFound as missing:
            raise Http404(f"No coupon {coupon_id}") from missing
        return render(request, "console/coupon.html", {"coupon": coupon})

from django.urls import path

from timeline.views import auth, coupon, home

app_name = "console"

urlpatterns = [
    path("", home.Home.as_view(), name="home"),
    path("coupons/<int:coupon_id>/", coupon.CouponPage.as_view(), name="coupon"),
    path("coupons/<int:coupon_id>/timeline/", coupon.CouponTimelinePart.as_view(),
         name="coupon_timeline"),
    path("coupons/<int:coupon_id>/ledger/", coupon.CouponLedgerPart.as_view(),
         name="coupon_ledger"),
    path("login/", auth.SignIn.as_view(), name="login"),
    path("logout/", auth.SignOut.as_view(), name="logout"),
]

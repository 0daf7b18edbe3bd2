from django.urls import path

from timeline.views import auth, coupon, home, reconciliation

app_name = "console"

urlpatterns = [
    path("", home.Home.as_view(), name="home"),
    path("coupons/<int:coupon_id>/", coupon.CouponPage.as_view(), name="coupon"),
    path("reconciliation/", reconciliation.ReconciliationPage.as_view(), name="reconciliation"),
    path("reconciliation/<int:finding_id>/resolve", reconciliation.FindingResolve.as_view(),
         name="reconciliation_resolve"),
    path("login/", auth.SignIn.as_view(), name="login"),
    path("logout/", auth.SignOut.as_view(), name="logout"),
]

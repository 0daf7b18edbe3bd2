from django.urls import path

from timeline.views import (
    auth,
    coupon,
    home,
    queues_approvals,
    queues_cases,
    queues_compensations,
)

app_name = "console"

urlpatterns = [
    path("", home.Home.as_view(), name="home"),
    path("coupons/<int:coupon_id>/", coupon.CouponPage.as_view(), name="coupon"),
    path("cases/", queues_cases.CaseQueue.as_view(), name="cases"),
    path("cases/<int:case_id>/resolve", queues_cases.CaseResolve.as_view(), name="case-resolve"),
    path("approvals/", queues_approvals.ApprovalQueue.as_view(), name="approvals"),
    path("approvals/<int:decision_id>/approve", queues_approvals.DecisionApprove.as_view(),
         name="decision-approve"),
    path("approvals/<int:decision_id>/reject", queues_approvals.DecisionReject.as_view(),
         name="decision-reject"),
    path("compensations/", queues_compensations.CompensationQueue.as_view(),
         name="compensations"),
    path("compensations/propose", queues_compensations.CompensationPropose.as_view(),
         name="compensation-propose"),
    path("compensations/<int:compensation_id>/approve",
         queues_compensations.CompensationApprove.as_view(), name="compensation-approve"),
    path("compensations/<int:compensation_id>/reject",
         queues_compensations.CompensationReject.as_view(), name="compensation-reject"),
    path("login/", auth.SignIn.as_view(), name="login"),
    path("logout/", auth.SignOut.as_view(), name="logout"),
]

"""The coupon core's API: templates, coupons and their commands, facts, conflict cases.

A coupon's check and timeline show after-sale's rows too. The core's HTTP layer imports no
refunds module, so after-sale's reads are passed in where the API is put together
(config/api_urls.py).
"""

from collections.abc import Callable, Sequence

from django.urls import path

from api import converters  # noqa: F401 - registers <dbid:...>
from coupons.diagnosis import RefundAnswer, Waiting
from coupons.history import Source

from . import event_views, goodwill_views, order_views, views


def coupon_urlpatterns(*, timeline_sources: Sequence[Source],
                       waiting_on_people: Callable[[object], Waiting],
                       refund_answer: Callable[[object], RefundAnswer | None]) -> list:
    """`timeline_sources`: after-sale's in a coupon's timeline; `waiting_on_people`: coupon →
    after-sale's rows that wait for a person, and `refund_answer`: coupon → its latest refund
    decision as an answer, for the check's diagnosis."""
    return [
        path("templates", views.TemplateListCreateApi.as_view(), name="templates"),
        path("templates/<dbid:template_id>", views.TemplateDetailApi.as_view(), name="template"),
        path("coupons", views.CouponListIssueApi.as_view(), name="coupons"),
        path("coupons/<dbid:coupon_id>", views.CouponDetailApi.as_view(), name="coupon"),
        path("coupons/<dbid:coupon_id>/lock", views.CouponLockApi.as_view(), name="coupon-lock"),
        path("coupons/<dbid:coupon_id>/renew", views.CouponRenewApi.as_view(),
             name="coupon-renew"),
        path("coupons/<dbid:coupon_id>/redeem", views.CouponRedeemApi.as_view(),
             name="coupon-redeem"),
        path("coupons/<dbid:coupon_id>/release", views.CouponReleaseApi.as_view(),
             name="coupon-release"),
        path("coupons/<dbid:coupon_id>/void", views.CouponVoidApi.as_view(), name="coupon-void"),
        path("coupons/<dbid:coupon_id>/operations", views.CouponOperationsApi.as_view(),
             name="coupon-operations"),
        path("coupons/<dbid:coupon_id>/rejections", views.CouponRejectionsApi.as_view(),
             name="coupon-rejections"),
        path("coupons/<dbid:coupon_id>/check",
             views.CouponCheckApi.as_view(waiting_on_people=waiting_on_people,
                                          refund_answer=refund_answer),
             name="coupon-check"),
        path("coupons/<dbid:coupon_id>/proof", views.CouponProofApi.as_view(),
             name="coupon-proof"),
        path("coupons/<dbid:coupon_id>/timeline",
             views.CouponTimelineApi.as_view(extra_sources=tuple(timeline_sources)),
             name="coupon-timeline"),
        path("orders/<str:order_id>/final-payment-check",
             order_views.FinalPaymentCheckApi.as_view(), name="order-final-payment-check"),
        path("events", event_views.EventReceiveApi.as_view(), name="events"),
        path("cases", event_views.CaseListApi.as_view(), name="cases"),
        path("cases/<dbid:case_id>/resolve", event_views.CaseResolveApi.as_view(),
             name="case_resolve"),
        path("goodwill", goodwill_views.GoodwillListProposeApi.as_view(), name="goodwill"),
        path("goodwill/<dbid:goodwill_id>", goodwill_views.GoodwillDetailApi.as_view(),
             name="goodwill-detail"),
        path("goodwill/<dbid:goodwill_id>/approve", goodwill_views.GoodwillApproveApi.as_view(),
             name="goodwill-approve"),
        path("goodwill/<dbid:goodwill_id>/reject", goodwill_views.GoodwillRejectApi.as_view(),
             name="goodwill-reject"),
    ]

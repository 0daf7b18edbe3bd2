from django.urls import path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from . import (
    compensation_views,
    event_views,
    policy_views,
    reconciliation_views,
    refund_views,
    views,
)
from .docs import sign_in_first


class DatabaseIdConverter:
    """A positive id that fits a bigint, so a huge number is a 404, not a database error."""

    regex = "[0-9]{1,18}"

    def to_python(self, value):
        return int(value)

    def to_url(self, value):
        return str(value)


register_converter(DatabaseIdConverter, "dbid")

urlpatterns = [
    path("templates", views.TemplateListCreateApi.as_view(), name="templates"),
    path("templates/<dbid:template_id>", views.TemplateDetailApi.as_view(), name="template"),
    path("coupons", views.CouponListIssueApi.as_view(), name="coupons"),
    path("coupons/<dbid:coupon_id>", views.CouponDetailApi.as_view(), name="coupon"),
    path("coupons/<dbid:coupon_id>/lock", views.CouponLockApi.as_view(), name="coupon-lock"),
    path("coupons/<dbid:coupon_id>/renew", views.CouponRenewApi.as_view(), name="coupon-renew"),
    path("coupons/<dbid:coupon_id>/redeem", views.CouponRedeemApi.as_view(),
         name="coupon-redeem"),
    path("coupons/<dbid:coupon_id>/release", views.CouponReleaseApi.as_view(),
         name="coupon-release"),
    path("coupons/<dbid:coupon_id>/void", views.CouponVoidApi.as_view(), name="coupon-void"),
    path("coupons/<dbid:coupon_id>/operations", views.CouponOperationsApi.as_view(),
         name="coupon-operations"),
    path("coupons/<dbid:coupon_id>/rejections", views.CouponRejectionsApi.as_view(),
         name="coupon-rejections"),
    path("coupons/<dbid:coupon_id>/check", views.CouponCheckApi.as_view(), name="coupon-check"),
    path("coupons/<dbid:coupon_id>/timeline", views.CouponTimelineApi.as_view(),
         name="coupon-timeline"),
    path("coupons/<dbid:coupon_id>/operations/<dbid:operation_id>/compensate",
         compensation_views.CompensationProposeApi.as_view(), name="compensation_propose"),
    path("compensations", compensation_views.CompensationListApi.as_view(),
         name="compensations"),
    path("compensations/<dbid:compensation_id>", compensation_views.CompensationDetailApi.as_view(),
         name="compensation"),
    path("compensations/<dbid:compensation_id>/approve",
         compensation_views.CompensationApproveApi.as_view(), name="compensation_approve"),
    path("compensations/<dbid:compensation_id>/reject",
         compensation_views.CompensationRejectApi.as_view(), name="compensation_reject"),
    path("events", event_views.EventReceiveApi.as_view(), name="events"),
    path("cases", event_views.CaseListApi.as_view(), name="cases"),
    path("cases/<dbid:case_id>/resolve", event_views.CaseResolveApi.as_view(),
         name="case_resolve"),
    path("reconciliation", reconciliation_views.FindingListApi.as_view(), name="reconciliation"),
    path("reconciliation/<dbid:finding_id>/resolve",
         reconciliation_views.FindingResolveApi.as_view(), name="reconciliation_resolve"),
    path("return-policies", policy_views.PolicyListCreateApi.as_view(), name="return-policies"),
    path("return-policies/<dbid:policy_id>", policy_views.PolicyDetailApi.as_view(),
         name="return-policy"),
    path("return-policies/<dbid:policy_id>/versions",
         policy_views.PolicyVersionListCreateApi.as_view(), name="return-policy-versions"),
    path("return-policies/<dbid:policy_id>/versions/<dbid:number>",
         policy_views.PolicyVersionDetailApi.as_view(), name="return-policy-version"),
    path("return-policies/<dbid:policy_id>/versions/<dbid:number>/publish",
         policy_views.PolicyVersionPublishApi.as_view(), name="return-policy-version-publish"),
    path("refunds", refund_views.RefundListReceiveApi.as_view(), name="refunds"),
    path("refunds/<dbid:decision_id>", refund_views.RefundDetailApi.as_view(), name="refund"),
    path("refunds/<dbid:decision_id>/approve", refund_views.RefundApproveApi.as_view(),
         name="refund-approve"),
    path("refunds/<dbid:decision_id>/reject", refund_views.RefundRejectApi.as_view(),
         name="refund-reject"),
    path("return-policies/<dbid:policy_id>/versions/<dbid:number>/preview",
         refund_views.PolicyVersionPreviewApi.as_view(), name="policy-version-preview"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", sign_in_first(SpectacularSwaggerView.as_view(url_name="api:schema")),
         name="docs"),
    path("redoc/", sign_in_first(SpectacularRedocView.as_view(url_name="api:schema")),
         name="redoc"),
]

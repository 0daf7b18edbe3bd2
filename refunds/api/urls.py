"""After-sale's API: refund decisions, compensations, return policies and their versions."""

from django.urls import path

from api import converters  # noqa: F401 - registers <dbid:...>

from . import compensation_views, policy_views, refund_views

urlpatterns = [
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
]

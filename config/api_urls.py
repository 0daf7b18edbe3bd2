"""/api/v1/: each domain's API under one namespace ("api"), then the schema and its docs."""

from django.urls import path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from api.docs import sign_in_first
from api.error_reference import error_reference
from coupons.api import urls as coupons_urls
from operations.api import urls as operations_urls
from operations.asyncapi import asyncapi_document
from refunds.api import urls as refunds_urls
from refunds.history import SOURCES as AFTER_SALE_SOURCES
from refunds.selectors import refund_answer, waiting_on_people

urlpatterns = [
    # The coupon core's HTTP layer imports no refunds module: after-sale's reads come in here.
    *coupons_urls.coupon_urlpatterns(timeline_sources=AFTER_SALE_SOURCES,
                                     waiting_on_people=waiting_on_people,
                                     refund_answer=refund_answer),
    *refunds_urls.urlpatterns,
    *operations_urls.urlpatterns,
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The broker's contract beside it, public too, its server this instance's broker.
    path("asyncapi/", asyncapi_document, name="asyncapi"),
    # Where each problem details' `type` points (API_ERROR_DOCS_URL's default), public too.
    path("errors/", error_reference, name="errors"),
    # Both without inline scripts, for the Content-Security-Policy: Swagger UI's
    # start-up script is fetched from the same URL (?script), ReDoc starts from its element.
    path("docs/", sign_in_first(SpectacularSwaggerSplitView.as_view(url_name="api:schema")),
         name="docs"),
    path("redoc/", sign_in_first(SpectacularRedocView.as_view(
        url_name="api:schema", template_name="api/redoc.html")), name="redoc"),
]

"""/api/v1/: each domain's API under one namespace ("api"), then the schema and its docs."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from coupons.api import urls as coupons_urls
from coupons.api.docs import sign_in_first
from operations.api import urls as operations_urls
from refunds.api import urls as refunds_urls

urlpatterns = [
    *coupons_urls.urlpatterns,
    *refunds_urls.urlpatterns,
    *operations_urls.urlpatterns,
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", sign_in_first(SpectacularSwaggerView.as_view(url_name="api:schema")),
         name="docs"),
    path("redoc/", sign_in_first(SpectacularRedocView.as_view(url_name="api:schema")),
         name="redoc"),
]

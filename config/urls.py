from django.contrib import admin
from django.urls import include, path

from operations.metrics_view import metrics_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("metrics", metrics_view, name="metrics"),
    path("api/v1/", include(("config.api_urls", "api"), namespace="api")),
    path("", include("console.urls")),
]

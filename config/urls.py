from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from operations.metrics_view import metrics_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("metrics", metrics_view, name="metrics"),
    # Browsers ask for it on pages that name no icon (the API's JSON, the admin).
    path("favicon.ico", RedirectView.as_view(url=static("timeline/favicon.svg"), permanent=True)),
    path("api/v1/", include(("config.api_urls", "api"), namespace="api")),
    path("", include("timeline.urls")),
]

# A database out of reach (refused, lost, its disk full) is a 503 page, not a 500.
handler500 = "common.unavailable.server_error"

"""The view log beyond the console's pages (timeline.views.access records those): what a person
signed in to the console reads through the API with their session, and the admin's change
pages. A service client's reads are not a person's and are not recorded here.
"""

from django.contrib.auth import get_user_model

from timeline.audit import record_view
from timeline.models import ViewRecord

PAGE_MAX = ViewRecord._meta.get_field("page").max_length


def _recorded_as(request) -> tuple[str, int | None] | None:
    """(page, coupon id) for a read this middleware records, else None."""
    match = request.resolver_match
    if match is None or not match.url_name:
        return None
    if request.path.startswith("/api/"):
        return f"api:{match.url_name}"[:PAGE_MAX], match.kwargs.get("coupon_id")
    if match.namespace == "admin" and match.url_name.endswith("_change"):
        coupon = match.kwargs.get("object_id") if match.url_name == "coupons_usercoupon_change" \
            else None
        return f"admin:{match.url_name}"[:PAGE_MAX], int(coupon) if coupon else None
    return None


class ViewLog:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if (request.method in ("GET", "HEAD") and response.status_code == 200
                and isinstance(user, get_user_model()) and user.is_authenticated):
            recorded = _recorded_as(request)
            if recorded is not None:
                record_view(request, page=recorded[0], coupon_id=recorded[1])
        return response

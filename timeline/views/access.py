"""Who may open a console page or press its buttons: signed-in people, by capability.

The console uses sessions only, so an API key (`Authorization: Token ...`) never opens it: a
request without a signed-in person goes to the console's sign-in page. A signed-in person who
lacks the capability gets the 403 page, and the attempt is kept in the refusal log.
"""

from django.contrib.auth.views import redirect_to_login
from django.shortcuts import render
from django.utils import timezone
from django.views import View
from django_htmx.http import HttpResponseClientRedirect

from coupons.capabilities import Capability
from coupons.write.refusals import record_console_denial
from timeline.audit import record_view
from timeline.glossary import CAPABILITIES
from timeline.time_zones import request_zone


class ConsolePage(View):
    """Base of every console view. `capabilities` maps an HTTP method to what it needs.

    Reads need READ unless a view says more; a POST must be declared, so an action added
    without its capability fails closed.
    """

    capabilities: dict[str, Capability] = {}
    # The view log's name for this page (console.audit): set on the pages that show coupons,
    # cases, decisions and return policies; a successful GET of one is recorded.
    audit_page = ""

    def dispatch(self, request, *args, **kwargs):
        # Every moment on the page in the reader's zone (console.time_zones); the pages
        # render before dispatch returns, so the override covers them.
        zone, request.console_zone_source = request_zone(request)
        with timezone.override(zone):
            return self.checked_dispatch(request, *args, **kwargs)

    def checked_dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            if request.htmx:
                # A session that ran out mid-action: the whole page goes to sign-in (and back
                # to where the person was), not the sign-in form into a queue item.
                back = request.htmx.current_url_abs_path or "/"
                return HttpResponseClientRedirect(redirect_to_login(back).url)
            return redirect_to_login(request.get_full_path())
        needed = self.required_capability(request.method)
        if needed is None or not request.user.has_perm(needed.perm):
            return denied(request, needed)
        response = super().dispatch(request, *args, **kwargs)
        # HEAD too: Django answers it with the GET view, so the page was read all the same.
        if self.audit_page and request.method in ("GET", "HEAD") and response.status_code == 200:
            record_view(request, page=self.audit_page, coupon_id=kwargs.get("coupon_id"))
        return response

    def required_capability(self, method: str) -> Capability | None:
        if method == "HEAD":
            method = "GET"  # Django answers HEAD with the GET view: the same work, same check
        if method in self.capabilities:
            return self.capabilities[method]
        if method in ("GET", "HEAD"):
            return Capability.READ
        return None


def denied(request, capability: Capability | None):
    record_console_denial(
        actor=request.user.get_username(), path=request.path, method=request.method,
        capability=capability.value if capability else "",
    )
    return render(request, "timeline/denied.html", {
        "capability": capability,
        "capability_words": capability and CAPABILITIES.get(capability, capability.label)},
        status=403)

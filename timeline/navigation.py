"""The console's navigation: each entry shows only to people holding its capability."""

from dataclasses import dataclass

from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from coupons.capabilities import Capability
from timeline.capabilities import ConsoleCapability


@dataclass(frozen=True)
class NavEntry:
    label: str  # translated when the bar is drawn (lazy)
    url_name: str
    capability: Capability | ConsoleCapability


# Console pages add their entry here, in the order the bar shows them.
ENTRIES = [
    NavEntry(_("Dashboard"), "console:home", Capability.READ),
    NavEntry(_("Search"), "console:search", Capability.READ),
    # The queues show to the people who act on them; support may still open them read-only.
    NavEntry(_("Cases"), "console:cases", Capability.RESOLVE_CASES),
    NavEntry(_("Approvals"), "console:approvals", Capability.APPROVE_REFUNDS),
    NavEntry(_("Compensations"), "console:compensations", Capability.APPROVE_COMPENSATION),
    NavEntry(_("Goodwill"), "console:goodwill", Capability.APPROVE_GOODWILL),
    NavEntry(_("Policies"), "console:policies", Capability.EDIT_POLICIES),
    NavEntry(_("Reconciliation"), "console:reconciliation", Capability.RESOLVE_CASES),
    NavEntry(_("Activity"), "console:activity", ConsoleCapability.VIEW_ACTIVITY),
]


def console_nav(request) -> dict:
    """Context processor: the entries this person may open, and which one is current."""
    user = getattr(request, "user", None)
    # DRF pages (the API docs) render with the API's caller as the user: a service client has
    # no groups and no navigation.
    if user is None or not user.is_authenticated or not hasattr(user, "has_perm"):
        return {"console_nav": []}
    entries = []
    for entry in ENTRIES:
        if user.has_perm(entry.capability.perm):
            url = reverse(entry.url_name)
            current = request.path == url or (url != "/" and request.path.startswith(url))
            entries.append({"label": entry.label, "url": url, "current": current})
    return {"console_nav": entries}

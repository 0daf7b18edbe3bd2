"""Capability checks for the API: each view names the capability each of its methods needs."""

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from rest_framework.permissions import BasePermission

from coupons.capabilities import Capability
from coupons.errors import CapabilityMissing
from coupons.identity import has_capability

READ_METHODS = {"GET", "HEAD"}


def required_capability(view, method: str) -> Capability | None:
    """`view.capabilities` maps a method to its capability; reads need READ unless told.

    A write method a view forgot to name needs a capability nobody has: fail closed.
    """
    declared = getattr(view, "capabilities", {})
    if method in declared:
        return declared[method]
    return Capability.READ if method in READ_METHODS else None


class HasCapability(BasePermission):
    def has_permission(self, request, view):
        if request.method == "OPTIONS" or not hasattr(view, request.method.lower()):
            # A method the view does not have, or OPTIONS (no metadata, settings): DRF answers
            # 405 after the checks; refusing it here would name a capability that does not exist.
            return True
        capability = required_capability(view, request.method)
        if capability is not None and has_capability(request.user, capability):
            return True
        if not request.user or not request.user.is_authenticated:
            return False  # DRF answers 401 NOT_AUTHENTICATED
        raise CapabilityMissing(
            format_lazy(_("This needs the {capability} capability."),
                        capability=capability or "unknown"),
            capability=capability.value if capability else None,
        )

from rest_framework.permissions import BasePermission

from coupons.models import ServiceClient


class IsServiceClientOrStaff(BasePermission):
    """Machine clients with an API key, or console staff signed in with a session."""

    message = "This API is for service clients and console staff."

    def has_permission(self, request, view):
        user = request.user
        if isinstance(user, ServiceClient):
            return True
        return bool(user and user.is_authenticated and user.is_staff)


def actor_of(user) -> str:
    return user.actor if isinstance(user, ServiceClient) else f"user:{user.get_username()}"


def idempotency_scope_of(user) -> str:
    return user.idempotency_scope if isinstance(user, ServiceClient) else f"user:{user.pk}"


class IsOperator(BasePermission):
    """Console users allowed to resolve conflict cases; machine clients never are."""

    message = "Only operators may see and resolve conflict cases."

    def has_permission(self, request, view):
        user = request.user
        return (not isinstance(user, ServiceClient) and user is not None
                and user.has_perm("coupons.resolve_conflictcase"))

"""Who is asking: a person or a service client, as the ledger names them and as grants see them.

The console and the API both ask these questions, so they live with the domain, not in an HTTP
layer.
"""

from coupons.capabilities import Capability
from coupons.models import ServiceClient


def has_capability(user, capability: Capability) -> bool:
    if isinstance(user, ServiceClient):
        return user.is_active and user.has_capability(capability)
    return bool(user and user.is_authenticated and user.is_active
                and user.has_perm(Capability(capability).perm))


def can_see_details(user) -> bool:
    """Case notes, compensation amounts and others' stored answers (coupons.redaction)."""
    return has_capability(user, Capability.VIEW_CASE_DETAILS)


def actor_of(user) -> str:
    return user.actor if isinstance(user, ServiceClient) else f"user:{user.get_username()}"


def idempotency_scope_of(user) -> str:
    return user.idempotency_scope if isinstance(user, ServiceClient) else f"user:{user.pk}"

"""Signed-in people in each console group, and service clients with chosen grants."""

from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from coupons.services import service_client_create

ROLES = ["support", "operator", "policy_admin"]


def person(username, *, group=None, superuser=False) -> User:
    """A staff user in `group` (None: staff with no group at all)."""
    if superuser:
        return User.objects.create_superuser(username, password="pw-123456")
    user = User.objects.create_user(username, password="pw-123456", is_staff=True)
    if group is not None:
        user.groups.add(Group.objects.get(name=group))
    return user


def signed_in(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def machine(name, *, capabilities=(), fact_types=()) -> APIClient:
    _, key = service_client_create(name=name, capabilities=capabilities, fact_types=fact_types)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client

"""Console tests sign in as one person per role, the way the demo's users are made."""

import pytest
from django.contrib.auth.models import Group

ROLES = ("support", "operator", "policy_admin")


@pytest.fixture
def make_person(db, django_user_model):
    def make(role: str | None, username: str | None = None):
        user = django_user_model.objects.create_user(username or f"{role or 'nobody'}-1")
        if role is not None:
            user.groups.add(Group.objects.get(name=role))
        return user

    return make


@pytest.fixture
def signed_in(client, make_person):
    """`signed_in("operator")`: the test client, signed in as a fresh person in that group."""

    def sign_in(role: str | None, username: str | None = None):
        client.force_login(make_person(role, username))
        return client

    return sign_in

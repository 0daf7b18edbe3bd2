"""The one-query permissions backend answers what Django's ModelBackend answers."""

import pytest
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission, User

from common.auth_backend import OneQueryModelBackend, group_names

pytestmark = pytest.mark.django_db


def test_permissions_of_the_user_and_its_groups_in_one_query(django_assert_num_queries):
    user = User.objects.create_user("both")
    user.groups.add(Group.objects.get(name="support"))
    user.user_permissions.add(Permission.objects.get(codename="add_group"))
    expected = ModelBackend().get_all_permissions(User.objects.get(pk=user.pk))
    assert "auth.add_group" in expected and len(expected) > 1

    fresh = User.objects.get(pk=user.pk)
    with django_assert_num_queries(1):
        assert OneQueryModelBackend().get_all_permissions(fresh) == expected
        assert OneQueryModelBackend().has_perm(fresh, "auth.add_group")


def test_an_inactive_user_has_none():
    user = User(username="gone", is_active=False)
    assert OneQueryModelBackend().get_all_permissions(user) == set()


def test_the_sessions_user_comes_with_permissions_and_groups_in_one_query(
        django_assert_num_queries):
    user = User.objects.create_user("both")
    user.groups.add(Group.objects.get(name="support"))
    user.user_permissions.add(Permission.objects.get(codename="add_group"))
    expected = ModelBackend().get_all_permissions(User.objects.get(pk=user.pk))

    with django_assert_num_queries(1):
        read = OneQueryModelBackend().get_user(user.pk)
        assert OneQueryModelBackend().get_all_permissions(read) == expected
        assert group_names(read) == ["support"]


def test_a_superuser_read_for_the_session_has_every_permission():
    boss = User.objects.create_superuser("boss")
    read = OneQueryModelBackend().get_user(boss.pk)
    assert OneQueryModelBackend().get_all_permissions(read) == {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Permission.objects.select_related("content_type")}
    assert group_names(read) == []


def test_an_inactive_or_missing_user_has_no_session():
    gone = User.objects.create_user("gone", is_active=False)
    assert OneQueryModelBackend().get_user(gone.pk) is None
    assert OneQueryModelBackend().get_user(gone.pk + 1) is None

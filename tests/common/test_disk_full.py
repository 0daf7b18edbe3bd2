"""A full disk is a 503 with a clear message, never a 500.

Before: the demo answered 500 when its disk was full (the embedded cluster could not start), and
a server whose database ran out of disk (PostgreSQL's disk_full, 53100) answered "the database
is not reachable", which sends an operator to the network instead of the disk.
"""

import errno

import psycopg
import pytest
from django.contrib.auth.models import Group
from django.db import OperationalError
from django.test import Client
from rest_framework.test import APIClient

from common.postgresql import base
from coupons.api import views

pytestmark = pytest.mark.django_db


@pytest.fixture
def quiet_api(service_client):
    """An API client that gets the answer instead of the exception re-raised."""
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {service_client[1]}")
    return client


def disk_full(**kwargs):
    raise OperationalError("could not extend file") from psycopg.errors.DiskFull(
        "could not extend file \"base/16384/16397\": No space left on device")


def no_space(**kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("failure", [disk_full, no_space], ids=["disk_full", "ENOSPC"])
def test_a_command_on_a_full_disk_answers_503_saying_so(
    quiet_api, coupon, monkeypatch, failure,
):
    monkeypatch.setattr(views, "coupon_void", failure)

    response = quiet_api.post(f"/api/v1/coupons/{coupon.pk}/void",
                              {"expected_version": 1, "reason": "r"}, format="json",
                              HTTP_IDEMPOTENCY_KEY="void-1")

    assert response.status_code == 503
    error = response.json()["error"]
    assert (error["code"], error["details"]["reason"]) == ("SERVICE_UNAVAILABLE", "disk_full")
    assert "disk is full" in error["message"]
    assert int(response["Retry-After"]) > 0


def test_a_console_page_on_a_full_disk_is_a_503_page_saying_so(django_user_model, monkeypatch):
    person = django_user_model.objects.create_user("support-1")
    person.groups.add(Group.objects.get(name="support"))
    client = Client(raise_request_exception=False)
    client.force_login(person)
    monkeypatch.setattr("timeline.views.home.dashboard_get", disk_full)

    response = client.get("/")

    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    assert "disk is full" in response.content.decode()


def test_an_embedded_cluster_that_cannot_start_for_want_of_space_is_a_full_disk(monkeypatch):
    def start(name):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(base.embedded_postgres, "start", start)

    with pytest.raises(psycopg.errors.DiskFull, match="no space left"):
        base._started("demo")

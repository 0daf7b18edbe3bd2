"""The home page and the API docs a person opens first, and a schema that covers every endpoint."""

import re

import pytest
from django.contrib.auth.models import Group
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db


def api_paths(patterns=None, prefix=""):
    """Every routed path under /api/v1/, written the OpenAPI way (`{coupon_id}`)."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from api_paths(entry.url_patterns, route)
        elif isinstance(entry, URLPattern) and route.startswith("api/v1/"):
            view = getattr(entry.callback, "cls", None)
            if view is not None and view.__module__.startswith("drf_spectacular"):
                continue  # the schema and docs views themselves
            if entry.name in ("asyncapi", "errors"):
                continue  # the broker's contract and the error reference, not operations
            yield "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


@pytest.fixture
def staff_client(client, django_user_model):
    person = django_user_model.objects.create_user("support", is_staff=True)
    person.groups.add(Group.objects.get(name="support"))
    client.force_login(person)
    return client


def test_home_page_links_the_api_docs(staff_client):
    response = staff_client.get("/")

    assert response.status_code == 200
    assert b"/api/v1/docs/" in response.content


def test_api_docs_page_is_html_for_staff(staff_client):
    response = staff_client.get("/api/v1/docs/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert b"swagger" in response.content.lower()


def test_schema_lists_every_api_endpoint(staff_client):
    response = staff_client.get("/api/v1/schema/", {"format": "json"})

    assert response.status_code == 200
    documented = set(response.json()["paths"])
    routed = set(api_paths())
    assert "/api/v1/coupons/{coupon_id}/redeem" in routed  # the walk found the API at all
    assert routed - documented == set()

"""No browsable API in production, and 405 for a method a view lacks.

Before: `?format=api` or `Accept: text/html` answered 500 INTERNAL_ERROR (the HTML renderer
tripped over a capability check, firing the server-error alert), and DELETE on a coupon
answered 403 "This needs the unknown capability".
"""

import pytest

from coupons.capabilities import Capability
from tests.api.roles import machine

pytestmark = pytest.mark.django_db

READS = ["/api/v1/coupons", "/api/v1/templates", "/api/v1/refunds"]


@pytest.fixture
def reader(db):
    return machine("reader", capabilities=[Capability.READ])


@pytest.mark.parametrize("path", READS)
def test_format_api_is_not_served(reader, path):
    response = reader.get(path, {"format": "api"})

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("path", READS)
def test_an_html_only_accept_header_gets_406_not_a_page(reader, path):
    response = reader.get(path, HTTP_ACCEPT="text/html")

    assert response.status_code == 406
    assert response.json()["error"]["code"] == "NOT_ACCEPTABLE"


def test_a_browser_accept_header_gets_json(reader):
    response = reader.get("/api/v1/coupons",
                          HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"


def test_the_timeline_in_html_is_refused_without_a_500(reader, coupon):
    response = reader.get(f"/api/v1/coupons/{coupon.pk}/timeline", {"format": "api"})

    assert response.status_code == 404


def test_delete_on_a_coupon_is_405_with_allow(coupon):
    client = machine("voider", capabilities=list(Capability))

    response = client.delete(f"/api/v1/coupons/{coupon.pk}")

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    assert "GET" in response["Allow"]
    assert "DELETE" not in response["Allow"]
    coupon.refresh_from_db()
    assert coupon.status == "AVAILABLE"


def test_delete_without_a_key_is_still_401(client, coupon):
    response = client.delete(f"/api/v1/coupons/{coupon.pk}")

    assert response.status_code == 401


def test_delete_with_no_grants_is_405_not_403(coupon):
    response = machine("nobody").delete(f"/api/v1/coupons/{coupon.pk}")

    assert response.status_code == 405

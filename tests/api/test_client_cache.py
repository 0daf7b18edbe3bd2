"""The service client behind a key is cached between requests; a change to it is not."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db


def client_reads(queries) -> int:
    return sum('FROM "coupons_serviceclient"' in q["sql"] for q in queries)


def test_the_client_row_is_read_once_for_several_requests(api, coupon):
    with CaptureQueriesContext(connection) as queries:
        for _ in range(3):
            assert api.get(f"/api/v1/coupons/{coupon.pk}").status_code == 200
    assert client_reads(queries.captured_queries) == 1


def test_a_deactivated_client_is_refused_at_its_next_request(api, service_client, coupon):
    assert api.get(f"/api/v1/coupons/{coupon.pk}").status_code == 200
    client = service_client[0]
    client.is_active = False
    client.save()

    response = api.get(f"/api/v1/coupons/{coupon.pk}")
    assert (response.status_code, response.json()["error"]["code"]) == (401, "NOT_AUTHENTICATED")


def test_a_revoked_grant_is_refused_at_the_next_request(api, service_client, coupon):
    assert api.get(f"/api/v1/coupons/{coupon.pk}").status_code == 200
    client = service_client[0]
    client.capabilities = [c for c in client.capabilities if c != "read_coupons"]
    client.save()

    response = api.get(f"/api/v1/coupons/{coupon.pk}")
    assert (response.status_code, response.json()["error"]["code"]) == (403, "PERMISSION_DENIED")

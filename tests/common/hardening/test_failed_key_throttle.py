"""Bad-key API requests are throttled per key, requests without one per client address.

Before: a wrong key failed in authentication, before DRF's throttles ran, so an address could
try keys (or hammer the API without one) as fast as the server answered. Then, counted per
address, one revoked key retried behind a shared egress address throttled every valid key
behind it.
"""

import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from coupons.capabilities import Capability
from coupons.services import service_client_create

pytestmark = pytest.mark.django_db

ATTACKER, NEIGHBOUR = "203.0.113.9", "198.51.100.7"


@pytest.fixture
def three_per_minute(settings):
    cache.clear()
    settings.TRUSTED_PROXY_COUNT = 1
    settings.TRUSTED_PROXY_ADDRESSES = ["10.0.0.2"]
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "anonymous": "3/min"}}
    yield
    cache.clear()


def get(address, key=None):
    client = APIClient()
    if key:
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get("/api/v1/coupons", REMOTE_ADDR="10.0.0.2",
                      HTTP_X_FORWARDED_FOR=address)


def key_lookups(queries) -> int:
    return sum('"coupons_serviceclient"' in q["sql"] for q in queries.captured_queries)


def test_a_wrong_key_retried_is_refused_before_any_lookup(three_per_minute):
    answers = [get(ATTACKER, "revoked-key").status_code for _ in range(3)]

    with CaptureQueriesContext(connection) as queries:
        refused = get(NEIGHBOUR, "revoked-key")

    assert answers == [401, 401, 401]
    assert refused.status_code == 429  # the key's count, from whichever address
    assert refused.json()["error"]["code"] == "THROTTLED"
    assert 0 < int(refused["Retry-After"]) <= 60
    assert key_lookups(queries) == 0


def test_a_valid_key_behind_an_address_full_of_bad_keys_is_answered(three_per_minute):
    """One egress address (NAT, a proxy) for many services: another's revoked key retried in
    a loop, and wrong keys, never refuse a valid one."""
    _, key = service_client_create(name="reader", capabilities=[Capability.READ])
    bad = [get(ATTACKER, "revoked-key").status_code for _ in range(5)]
    bad += [get(ATTACKER, f"guess-{n}").status_code for n in range(5)]
    bad += [get(ATTACKER).status_code for _ in range(4)]

    assert bad.count(429) == 2 + 1  # the revoked key twice past its rate, no key once
    assert get(ATTACKER, key).status_code == 200


def test_requests_without_a_key_count_too(three_per_minute):
    answers = [get(ATTACKER).status_code for _ in range(4)]

    assert answers == [401, 401, 401, 429]
    assert get(NEIGHBOUR).status_code == 401


def test_good_keys_are_not_counted(three_per_minute):
    _, key = service_client_create(name="reader", capabilities=[Capability.READ])

    answers = [get(ATTACKER, key).status_code for _ in range(6)]

    assert answers == [200] * 6


def test_a_signed_in_console_session_is_not_refused(three_per_minute, django_user_model):
    for _ in range(3):
        get(ATTACKER)
    person = django_user_model.objects.create_user("sue", is_staff=True)
    person.groups.add(Group.objects.get(name="support"))
    browser = APIClient()
    browser.force_login(person)

    answer = browser.get("/api/v1/coupons", REMOTE_ADDR="10.0.0.2",
                         HTTP_X_FORWARDED_FOR=ATTACKER)

    assert answer.status_code == 200

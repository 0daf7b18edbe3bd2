"""What is in Redis is data, and the cached service client is signed.

Before: with REDIS_URL set, the cached service client was a pickle at
`:1:service-client:<sha256(key)>`; writing one with every capability turned a grantless
client's 403 into 200 and a successful VOID, and unpickling it ran whatever it said.
These tests use the real Redis (127.0.0.1:6379, db 13) and are skipped without it.
"""

import json
import os
import pickle
import uuid

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from api.authentication import _cache_entry, _cache_key
from api.throttling import PerCallerRateThrottle
from coupons.capabilities import Capability
from coupons.models import ServiceClient
from coupons.services import service_client_create
from coupons.write.tokens import hash_token
from tests.api.roles import machine

redis = pytest.importorskip("redis")
pytestmark = pytest.mark.django_db

REDIS_URL = "redis://127.0.0.1:6379/13"
# Its own per process: test runs side by side (xdist workers, other checkouts) share db 13.
PREFIX = f"harden-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def raw():
    connection = redis.Redis.from_url(REDIS_URL)
    try:
        connection.ping()
    except redis.exceptions.ConnectionError:
        pytest.skip("no Redis at 127.0.0.1:6379")
    yield connection
    for key in connection.scan_iter(f"{PREFIX}:*"):
        connection.delete(key)


@pytest.fixture
def redis_cache(settings, raw):
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
        "KEY_PREFIX": PREFIX,
        "OPTIONS": {"serializer": "common.cache_serializer.JsonSerializer"},
    }}
    return raw


def redis_key(key: str) -> str:
    return f"{PREFIX}:1:{_cache_key(hash_token(key))}"


@pytest.fixture
def grantless(db):
    return service_client_create(name="grantless", capabilities=[], fact_types=[])


def void(key, coupon):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.post(f"/api/v1/coupons/{coupon.pk}/void",
                       {"expected_version": coupon.state_version, "reason": "forged"},
                       format="json", HTTP_IDEMPOTENCY_KEY="forged-void")


def read(key, coupon):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get(f"/api/v1/coupons/{coupon.pk}")


def assert_still_grantless(key, coupon):
    assert read(key, coupon).status_code == 403
    assert void(key, coupon).status_code == 403
    coupon.refresh_from_db()
    assert coupon.status == "AVAILABLE"


class Explode:
    """A pickle that, when loaded, writes a file: code execution if anything unpickles it."""

    marker = ""

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_pickled_all_capabilities_client_written_to_redis_is_ignored(
    redis_cache, grantless, coupon, tmp_path,
):
    client, key = grantless
    assert read(key, coupon).status_code == 403  # cached now, as signed JSON
    forged = ServiceClient(id=client.pk, name=client.name, key_hash=client.key_hash,
                           capabilities=[c.value for c in Capability], fact_types=[])
    redis_cache.set(redis_key(key), pickle.dumps(forged))

    assert_still_grantless(key, coupon)

    Explode.marker = str(tmp_path / "ran")
    redis_cache.set(redis_key(key), pickle.dumps(Explode()))
    assert read(key, coupon).status_code == 403
    assert not os.path.exists(Explode.marker)


def test_an_unsigned_json_client_is_ignored(redis_cache, grantless, coupon):
    client, key = grantless
    entry = {"id": client.pk, "name": client.name, "key_prefix": client.key_prefix,
             "key_hash": client.key_hash, "is_active": True,
             "capabilities": [c.value for c in Capability], "fact_types": []}
    redis_cache.set(redis_key(key), json.dumps(entry))
    redis_cache.set(redis_key(key), json.dumps(json.dumps(entry)))  # a JSON string, too

    assert_still_grantless(key, coupon)


def test_another_clients_genuine_entry_copied_under_this_key_is_ignored(
    redis_cache, grantless, coupon,
):
    mighty, _ = service_client_create(name="mighty", capabilities=list(Capability),
                                      fact_types=[])
    _, key = grantless
    redis_cache.set(redis_key(key), json.dumps(_cache_entry(mighty)))

    assert_still_grantless(key, coupon)


def test_what_the_app_stores_in_redis_is_json(redis_cache, coupon):
    api = machine("reader", capabilities=[Capability.READ])

    assert api.get(f"/api/v1/coupons/{coupon.pk}").status_code == 200

    keys = list(redis_cache.scan_iter(f"{PREFIX}:*"))
    assert keys
    for stored in keys:
        value = redis_cache.get(stored)
        json.loads(value)  # never a pickle
    assert cache.get(_cache_key(ServiceClient.objects.get(name="reader").key_hash))


@pytest.fixture
def frozen_window(monkeypatch):
    """The throttles' clock stopped, so a test knows which window's counter a request uses."""
    now = 6_000_000.0
    monkeypatch.setattr(PerCallerRateThrottle, "timer", lambda self: now)
    return int(now // 60)  # the window of a per-minute rate


def test_a_service_client_is_counted_in_redis_one_window_at_a_time(
    redis_cache, service_client, coupon, frozen_window,
):
    client, key = service_client
    counter = f"{PREFIX}:1:throttle_service_client_{client.pk}_{frozen_window}"

    answers = [read(key, coupon).status_code for _ in range(3)]

    assert answers == [200, 200, 200]
    assert redis_cache.get(counter) == b"3"  # a count, never a pickle
    assert 0 < redis_cache.ttl(counter) <= 60  # gone once its window is over


@pytest.mark.parametrize("stored", [b"\x80\x04not json", b"1.5", b'{"a": 1}', b'[1764859000.0]'],
                         ids=["not-json", "not-a-whole-number", "an-object", "a-history"])
def test_a_throttle_key_that_holds_no_count_starts_again(
    redis_cache, service_client, coupon, stored, frozen_window,
):
    client, key = service_client
    counter = f"{PREFIX}:1:throttle_service_client_{client.pk}_{frozen_window}"
    redis_cache.set(counter, stored)

    answer = read(key, coupon)

    assert answer.status_code == 200, answer.content
    # The count starts again from this request.
    assert redis_cache.get(counter) == b"1"

"""Redis is a cache: stopped, the API answers as it would without it, never a 500.

Before: with REDIS_URL set, Redis down turned every API call into a 500
(`redis.exceptions.ConnectionError` from the cached client read in api/authentication.py), GETs
too, while /readyz answered 200 `{"status": "ok"}`. The cache here is the one the production
settings make from REDIS_URL, on a redis-server of the test's own, killed mid-test.
"""

import runpy

import pytest
from django.conf import settings as django_settings
from django.test import Client
from prometheus_client import REGISTRY
from rest_framework.test import APIClient

from api.throttling import PerCallerRateThrottle
from tests.faults import RedisServer

pytestmark = pytest.mark.django_db

ORDER = {"order_id": "order-A", "user_id": "u1", "order_amount": "300.00"}


@pytest.fixture
def redis_server():
    try:
        server = RedisServer()
    except FileNotFoundError:
        pytest.skip("redis-server is not installed")
    yield server
    server.stop()


@pytest.fixture
def production_cache(settings, monkeypatch, redis_server):
    """CACHES as config/settings.py makes them from REDIS_URL, pointed at the test's Redis."""
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    made = runpy.run_path(str(django_settings.BASE_DIR / "config" / "settings.py"))
    settings.CACHES = made["CACHES"]
    return redis_server


def readyz() -> tuple[int, dict]:
    response = Client().get("/readyz")
    return response.status_code, response.json()


def fallbacks(operation: str) -> float:
    return REGISTRY.get_sample_value("coupons_cache_fallbacks_total",
                                     {"operation": operation}) or 0.0


def test_with_redis_stopped_reads_and_commands_answer_and_readyz_says_degraded(
    api, coupon, template, production_cache,
):
    assert api.get(f"/api/v1/coupons/{coupon.pk}").status_code == 200  # its client now in Redis
    assert readyz() == (200, {"status": "ok"})
    before = fallbacks("get_many")

    production_cache.stop()

    answers = [
        api.get(f"/api/v1/coupons/{coupon.pk}").status_code,
        api.get("/api/v1/coupons", {"user_id": "u1"}).status_code,
        api.post(f"/api/v1/coupons/{coupon.pk}/lock", ORDER, format="json",
                 HTTP_IDEMPOTENCY_KEY="lock-1").status_code,
        api.post(f"/api/v1/coupons/{coupon.pk}/lock", ORDER, format="json",
                 HTTP_IDEMPOTENCY_KEY="lock-1").status_code,  # its replay
        api.post("/api/v1/coupons", {"template_id": template.pk, "user_id": "u2"},
                 format="json", HTTP_IDEMPOTENCY_KEY="issue-1").status_code,
    ]
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION="Token not-a-key")
    refused = stranger.get(f"/api/v1/coupons/{coupon.pk}")

    assert answers == [200, 200, 200, 200, 201]
    assert (refused.status_code, refused.json()["error"]["code"]) == (401, "NOT_AUTHENTICATED")
    assert readyz() == (200, {"status": "degraded", "degraded": ["cache"]})
    assert fallbacks("get_many") > before


def test_with_redis_stopped_each_process_still_throttles_on_its_own_count(
    api, coupon, production_cache, settings, monkeypatch,
):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"service_client": "3/min"}}
    monkeypatch.setattr(PerCallerRateThrottle, "timer", lambda self: 60.0 * 1_000_000)
    production_cache.stop()

    statuses = [api.get(f"/api/v1/coupons/{coupon.pk}").status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]

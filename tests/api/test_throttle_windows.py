"""The throttles count each caller's requests per fixed window of the rate's period, in one
counter: a refusal's Retry-After is what is left of the window, and the next window starts at
nothing (docs/deploy.md)."""

import pytest
from django.core.cache import cache

from api.throttling import PerCallerRateThrottle

pytestmark = pytest.mark.django_db

# 100,000 whole minutes since the epoch, and 45.5 s of the next one.
WINDOW = 100_000
LATE_IN_THE_WINDOW = WINDOW * 60 + 45.5


@pytest.fixture
def two_a_minute(settings):
    cache.clear()
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        "service_client": "2/min", "user": "1000/min"}}
    yield
    cache.clear()


@pytest.fixture
def now(monkeypatch):
    now = [LATE_IN_THE_WINDOW]
    monkeypatch.setattr(PerCallerRateThrottle, "timer", lambda self: now[0])
    return now


def test_retry_after_is_what_is_left_of_the_window(api, two_a_minute, now):
    answers = [api.get("/api/v1/coupons").status_code for _ in range(2)]
    refused = api.get("/api/v1/coupons")

    assert answers == [200, 200]
    assert refused.status_code == 429
    assert refused["Retry-After"] == "15"  # 14.5 s left, rounded up
    assert refused.json()["error"]["details"]["retry_after"] == 15


def test_the_next_window_starts_at_nothing(api, two_a_minute, now):
    for _ in range(2):
        api.get("/api/v1/coupons")
    assert api.get("/api/v1/coupons").status_code == 429

    now[0] = (WINDOW + 1) * 60  # the next minute

    assert [api.get("/api/v1/coupons").status_code for _ in range(3)] == [200, 200, 429]


def test_a_caller_is_one_counter_per_window(api, service_client, two_a_minute, now):
    for _ in range(3):
        api.get("/api/v1/coupons")

    # A number, whatever the rate: not a list of every request's time.
    assert cache.get(f"throttle_service_client_{service_client[0].pk}_{WINDOW}") == 3

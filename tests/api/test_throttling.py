"""Request rates per service client and per user, and sign-in attempt limits (django-axes).

The suite runs with high rates (config/test_settings.py); these tests lower them.
"""

import uuid

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.core.management import call_command
from rest_framework.test import APIClient

from api.throttling import PerCallerRateThrottle
from coupons.services import service_client_create
from tests.command_checks import ledger
from tests.conftest import ALL_GRANTS

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings):
    """Set throttle rates for this test, with empty counters."""
    cache.clear()

    def rates(**scopes):
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {"service_client": "1000/min", "user": "1000/min",
                                       **scopes},
        }

    yield rates
    cache.clear()


@pytest.fixture
def fake_time(monkeypatch):
    """The throttles' own clock, so a test can let the window pass."""
    now = [1_000_000.0]
    monkeypatch.setattr(PerCallerRateThrottle, "timer", lambda self: now[0])
    return now


def client_with_key(key) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def assert_throttled(response):
    assert response.status_code == 429, response.content
    error = response.json()["error"]
    assert error["code"] == "THROTTLED"
    assert set(error) == {"code", "message", "details"}
    assert 0 < int(response["Retry-After"]) <= 60
    assert error["details"]["retry_after"] == int(response["Retry-After"])


def test_a_service_client_over_its_rate_gets_429_until_the_window_passes(
    api, rates, fake_time,
):
    rates(service_client="3/min")

    answers = [api.get("/api/v1/coupons").status_code for _ in range(3)]
    throttled = api.get("/api/v1/coupons")
    fake_time[0] += 61
    later = api.get("/api/v1/coupons")

    assert answers == [200, 200, 200]
    assert_throttled(throttled)
    assert later.status_code == 200


def test_each_service_client_has_its_own_budget(api, rates, clock):
    rates(service_client="2/min")
    _, other_key = service_client_create(name="payment-service", **ALL_GRANTS)
    other = client_with_key(other_key)

    for _ in range(2):
        api.get("/api/v1/coupons")
    assert_throttled(api.get("/api/v1/coupons"))

    assert other.get("/api/v1/coupons").status_code == 200


def test_a_throttled_command_has_no_effect(api, rates, coupon):
    rates(service_client="1/min")
    api.get(f"/api/v1/coupons/{coupon.pk}")

    refused = api.post(f"/api/v1/coupons/{coupon.pk}/lock",
                       {"order_id": "A", "user_id": "u1", "order_amount": "300.00"},
                       format="json", HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))

    assert_throttled(refused)
    assert [row[0] for row in ledger(coupon)] == ["ISSUE"]


def test_a_signed_in_user_has_a_rate_of_their_own(rates, api):
    rates(user="2/min", service_client="1000/min")
    staff = User.objects.create_user("sam", is_staff=True)
    staff.groups.add(Group.objects.get(name="support"))
    browser = APIClient()
    browser.force_login(staff)

    answers = [browser.get("/api/v1/coupons").status_code for _ in range(2)]

    assert answers == [200, 200]
    assert_throttled(browser.get("/api/v1/coupons"))
    assert api.get("/api/v1/coupons").status_code == 200  # service clients count apart


# --- Sign-in attempts ----------------------------------------------------------------------------


@pytest.fixture
def alice(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return User.objects.create_user("alice", password="right-password-42", is_staff=True,
                                    is_superuser=True)


def sign_in(client, password, *, address="10.0.0.1"):
    return client.post("/admin/login/?next=/admin/",
                       {"username": "alice", "password": password},
                       REMOTE_ADDR=address)


def signed_in(client) -> bool:
    return client.get("/admin/").status_code == 200


def test_forty_wrong_passwords_lock_out_the_right_one(client, alice, settings):
    answers = [sign_in(client, f"guess-{n}").status_code for n in range(40)]
    right = sign_in(client, "right-password-42")

    assert answers[0] == 200  # the form again, with its error
    assert answers[-1] == 429
    assert answers.index(429) == settings.AXES_FAILURE_LIMIT - 1
    assert right.status_code == 429
    page = right.content.decode()
    assert "Sign-in locked" in page and "alice" in page and "axes_reset_username" in page
    assert not signed_in(client)


def test_an_administrator_unlocks_a_locked_out_user(client, alice, settings):
    for n in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, f"guess-{n}")
    assert sign_in(client, "right-password-42").status_code == 429

    call_command("axes_reset_username", "alice")

    assert sign_in(client, "right-password-42").status_code == 302
    assert signed_in(client)


def test_wrong_passwords_from_elsewhere_do_not_lock_the_user_out(client, alice, settings):
    for n in range(settings.AXES_FAILURE_LIMIT + 5):
        sign_in(client, f"guess-{n}", address="203.0.113.9")

    assert sign_in(client, "right-password-42", address="10.0.0.1").status_code == 302
    assert signed_in(client)

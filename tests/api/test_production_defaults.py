"""Safe defaults: no start without secrets, check --deploy clean, JSON errors, clean logs."""

import io
import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.db import OperationalError
from rest_framework.test import APIClient

from common.log_redaction import RedactSecrets
from coupons import selectors
from coupons.api import views

ROOT = Path(__file__).resolve().parents[2]
# The suite's own server (DATABASE_URL's, or the embedded `test` cluster, which the suite stops
# at its end), never the checkout's demo cluster that a process without either would start.
SUITE_DATABASE = ({"DATABASE_URL": os.environ["DATABASE_URL"]} if os.environ.get("DATABASE_URL")
                  else {"EMBEDDED_DATABASE": "test"})
# A server's environment in docs/deploy.md: nothing else is set.
PRODUCTION_ENV = {
    **SUITE_DATABASE,
    "DJANGO_SECRET_KEY": "Zq3-production-like-secret-key-of-sixty-characters-k7Pw92LmXc4",
    "LEASE_TOKEN_SECRET": "lease-token-secret-of-its-own-R8vTq2Lm9XcP4wZ7",
    "IDEMPOTENCY_SEAL_SECRET": "idempotency-seal-secret-of-its-own-Vb3Kq8Zt5Wm2",
    "DJANGO_ALLOWED_HOSTS": "coupons.example.com",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://coupons.example.com",
    "DJANGO_BEHIND_TLS_PROXY": "1",
    "TRUSTED_PROXY_ADDRESSES": "10.0.0.2",
}


def manage(*args, env: dict) -> subprocess.CompletedProcess:
    """manage.py in a fresh process whose environment is exactly `env` (plus PATH)."""
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True,
        env={"PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "config.settings",
             **env},
        timeout=120,
    )


def without(*names) -> dict:
    return {k: v for k, v in PRODUCTION_ENV.items() if k not in names}


def test_check_deploy_is_clean_with_the_documented_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)

    assert result.returncode == 0, result.stderr + result.stdout
    assert "System check identified no issues" in result.stdout


def test_debug_is_off_and_https_is_on_unless_asked_otherwise():
    shown = manage("shell", "-v0", "-c", "from django.conf import settings as s; print(s.DEBUG, "
                   "s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE)",
                   env=without("DJANGO_BEHIND_TLS_PROXY"))

    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == ["False", "True", "True", "True"]


def test_check_deploy_flags_debug_when_it_is_turned_on():
    """The deploy check above can fail: DEBUG on is reported."""
    result = manage("check", "--deploy", "--fail-level", "WARNING",
                    env={**PRODUCTION_ENV, "DJANGO_DEBUG": "1"})

    assert result.returncode != 0
    assert "security.W018" in result.stderr + result.stdout


@pytest.mark.parametrize("env, named", [
    (without("DJANGO_SECRET_KEY", "LEASE_TOKEN_SECRET"), "DJANGO_SECRET_KEY is not set"),
    (without("LEASE_TOKEN_SECRET"), "LEASE_TOKEN_SECRET is not set"),
    ({**PRODUCTION_ENV, "LEASE_TOKEN_SECRET": PRODUCTION_ENV["DJANGO_SECRET_KEY"]},
     "LEASE_TOKEN_SECRET must differ from DJANGO_SECRET_KEY"),
    ({**without("LEASE_TOKEN_SECRET"), "LEASE_TOKEN_SECRETS": "k2"},
     "LEASE_TOKEN_SECRETS must look like k2:<secret>,k1:<secret>"),
    (without("IDEMPOTENCY_SEAL_SECRET"), "IDEMPOTENCY_SEAL_SECRET is not set"),
    ({**PRODUCTION_ENV, "IDEMPOTENCY_SEAL_SECRET": PRODUCTION_ENV["LEASE_TOKEN_SECRET"]},
     "IDEMPOTENCY_SEAL_SECRET must differ"),
], ids=["no-secret-key", "no-lease-secret", "same-secret", "bad-key-list", "no-seal-secret",
        "seal-secret-reused"])
def test_the_server_refuses_to_start_without_its_secrets(env, named):
    result = manage("check", env=env)

    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert named in result.stderr


def test_a_rotation_list_names_the_current_key_first():
    shown = manage("shell", "-v0", "-c",
                   "from coupons.write.tokens import current_lease_key_id as current; "
                   "print(current())",
                   env={**without("LEASE_TOKEN_SECRET"),
                        "LEASE_TOKEN_SECRETS": "k2:second-secret,k1:first-secret"})

    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "k2"


# --- Errors under /api/ are JSON error bodies (docs/api.md), whatever DEBUG is ---------------


@pytest.fixture
def log_output():
    """What the configured console handler writes (it carries the redaction filter)."""
    handler = next(h for h in logging.getLogger("django").handlers
                   if any(isinstance(f, RedactSecrets) for f in h.filters))
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    yield buffer
    handler.setStream(previous)


@pytest.fixture
def quiet_api(service_client):
    """An API client that gets the 500 answer instead of the exception re-raised."""
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {service_client[1]}")
    return client


def assert_error_body(response, status, code):
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert list(body) == ["error"] and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    text = response.content.decode()
    for leak in ("Traceback", "DATABASE_URL", "SECRET", "Token ", "lock_token"):
        assert leak not in text


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_a_database_outage_answers_503_with_retry_after_and_logs_no_secret(
    quiet_api, service_client, coupon, settings, monkeypatch, log_output, debug,
):
    settings.DEBUG = debug
    key = service_client[1]
    token = "Hq7Lm2Xc9Vb4Nw8Zr3Tp6Ks1Jd5Fg0Ya2Ue7Io4Pq9"  # shaped like a lease token

    def database_down(**kwargs):
        # Drivers echo what they were sending; this one echoes the caller's secrets.
        raise OperationalError(f"connection lost; params: key={key} lock_token={token} "
                               f"Authorization: Token {key}")

    monkeypatch.setattr(views, "coupon_redeem", database_down)
    response = quiet_api.post(
        f"/api/v1/coupons/{coupon.pk}/redeem",
        {"order_id": "A", "lock_token": token, "expected_version": 2, "payment_id": "P"},
        format="json", HTTP_IDEMPOTENCY_KEY="pay-A",
    )

    assert_error_body(response, 503, "SERVICE_UNAVAILABLE")
    assert int(response["Retry-After"]) > 0
    assert response.json()["error"]["details"] == {"retry_after": int(response["Retry-After"]),
                                                   "reason": "unreachable"}
    logged = log_output.getvalue()
    assert "database unavailable on POST" in logged
    assert "OperationalError" in logged and "[REDACTED]" in logged
    assert key not in logged and token not in logged


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_a_bug_answers_500_internal_error_without_a_traceback(
    quiet_api, service_client, coupon, settings, monkeypatch, log_output, debug,
):
    settings.DEBUG = debug

    def broken(**kwargs):
        raise RuntimeError(f"bug while reading with key {service_client[1]}")

    monkeypatch.setattr(selectors, "coupon_get", broken)
    response = quiet_api.get(f"/api/v1/coupons/{coupon.pk}")

    assert_error_body(response, 500, "INTERNAL_ERROR")
    logged = log_output.getvalue()
    assert "RuntimeError" in logged
    assert service_client[1] not in logged


@pytest.mark.django_db
def test_an_error_outside_the_api_views_is_json_too_with_debug_on(
    quiet_api, settings, monkeypatch,
):
    """A failure in middleware, before any view: Django's technical page without the fix.
    (The locale middleware, because a token request passes the session one by.)"""
    from django.middleware.locale import LocaleMiddleware

    settings.DEBUG = True

    def middleware_down(self, request):
        raise OperationalError("database unreachable")

    monkeypatch.setattr(LocaleMiddleware, "process_request", middleware_down)
    response = quiet_api.get("/api/v1/coupons")

    assert_error_body(response, 500, "INTERNAL_ERROR")


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_an_unroutable_api_url_is_a_json_404(api, settings, debug):
    settings.DEBUG = debug

    response = api.get("/api/v1/no-such-thing")

    assert_error_body(response, 404, "NOT_FOUND")
    assert response.json()["error"]["details"] == {"path": "/api/v1/no-such-thing"}


@pytest.mark.django_db
def test_an_unroutable_page_outside_the_api_is_still_a_page(client):
    response = client.get("/no-such-page")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


# --- The log filter on its own -------------------------------------------------------------------


@pytest.mark.parametrize("line", [
    "Authorization: Token {key}",
    "{{'HTTP_AUTHORIZATION': 'Token {key}'}}",
    '{{"lock_token": "{key}", "order_id": "A"}}',
    "retrying with api_key={key}&x=1",
    "bare value {key} in a message",
    "hash {hash} of a token",
])
def test_the_log_filter_redacts_keys_tokens_and_hashes(line):
    key = "pP4x-Qz9_Lm2Xc7Vb1Nw8Zr3Tp6Ks5Jd0Fg4Ya8UeQ"
    digest = uuid.uuid4().hex + uuid.uuid4().hex
    record = logging.LogRecord("t", logging.ERROR, __file__, 1,
                               line.format(key=key, hash=digest), None, None)

    RedactSecrets().filter(record)

    assert key not in record.getMessage() and digest not in record.getMessage()
    assert "[REDACTED]" in record.getMessage()


def test_the_log_filter_leaves_ordinary_ids_alone():
    lock_id = str(uuid.uuid4())
    message = f"refused TOKEN_MISMATCH: coupon 12 lock {lock_id} order order-42 key pay-42"
    record = logging.LogRecord("t", logging.INFO, __file__, 1, message, None, None)

    RedactSecrets().filter(record)

    assert record.getMessage() == message


@pytest.mark.parametrize(("addresses", "message"), [
    (None, "needs TRUSTED_PROXY_ADDRESSES"),
    ("10.0.0.2, not-an-address", "TRUSTED_PROXY_ADDRESSES: 'not-an-address'"),
])
def test_behind_a_proxy_the_server_does_not_start_without_the_proxies_addresses(
    addresses, message
):
    env = without("TRUSTED_PROXY_ADDRESSES")
    if addresses is not None:
        env["TRUSTED_PROXY_ADDRESSES"] = addresses
    result = manage("check", env=env)

    assert result.returncode != 0
    assert message in result.stderr


def test_read_replicas_start_without_redis_as_read_your_writes_travels_with_the_caller():
    env = {**PRODUCTION_ENV, "DATABASE_URL": "postgres://coupon_app@127.0.0.1:5432/coupons",
           "DATABASE_REPLICA_URLS": "postgres://coupon_app@127.0.0.1:5433/coupons"}
    configured = manage("shell", "-v0", "-c", "from django.conf import settings as s; "
                        "print(s.DATABASE_REPLICA_ALIASES, s.CACHES['default']['BACKEND'])",
                        env=env)

    assert configured.returncode == 0, configured.stderr
    assert configured.stdout.split() == [
        "['replica_1']", "django.core.cache.backends.locmem.LocMemCache"]

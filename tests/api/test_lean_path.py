"""The lean API path: a service client's `Authorization: Token` request passes by
the middleware only browsers need (session, CSRF, user, messages, htmx, sign-in lockout);
every other request keeps all of it, and the answer's headers stay the same."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.api.roles import person

pytestmark = pytest.mark.django_db

ORDER = {"order_id": "order-A", "user_id": "u1", "order_amount": "300.00"}


def lock_url(coupon) -> str:
    return f"/api/v1/coupons/{coupon.pk}/lock"


def test_a_token_request_runs_none_of_the_browser_middleware(api, coupon):
    response = api.post(lock_url(coupon), ORDER, format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert response.status_code == 200
    request = response.wsgi_request
    assert not hasattr(request, "session")
    assert not hasattr(request, "_messages")
    assert not hasattr(request, "htmx")
    assert request.user.name == "order-service"  # set by the token authentication alone
    # The headers the skipped middleware used to leave are still there.
    assert set(response["Vary"].split(", ")) == {"Accept-Language", "Cookie"}
    assert response["X-Frame-Options"] == "DENY"


def test_a_persons_api_request_keeps_the_session_and_its_csrf_check(coupon):
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(person("ops", group="operator"))

    response = browser.post(lock_url(coupon), ORDER, format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert response.status_code == 403
    assert "CSRF" in response.json()["error"]["message"]
    assert hasattr(response.wsgi_request, "session")
    coupon.refresh_from_db()
    assert coupon.status == "AVAILABLE"


def test_a_token_header_outside_the_api_skips_nothing():
    # Only /api/ is decided by the token: a console form posted with the header still needs
    # its CSRF token.
    browser = Client(enforce_csrf_checks=True)

    response = browser.post("/login/", {"username": "x", "password": "y"},
                            HTTP_AUTHORIZATION="Token anything")

    assert response.status_code == 403
    assert hasattr(response.wsgi_request, "session")


def test_a_signed_in_session_does_not_rescue_a_wrong_token(coupon):
    browser = APIClient()
    browser.force_login(person("ops", group="operator"))
    browser.credentials(HTTP_AUTHORIZATION="token not-a-key")  # any case, as DRF reads it

    response = browser.post(lock_url(coupon), ORDER, format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert response.status_code == 401
    coupon.refresh_from_db()
    assert coupon.status == "AVAILABLE"


def test_the_api_docs_answer_a_token_client(api):
    assert api.get("/api/v1/docs/").status_code == 200

"""Structured logs: one JSON object a line with the request id, the client and the coupon, and
never a key or token."""

import json
import logging

import pytest

from tests.common.observability.capture import console_lines

pytestmark = pytest.mark.django_db

KEY_SHAPED = "Hq7Lm2Xc9Vb4Nw8Zr3Tp6Ks1Jd5Fg0Ya2Ue7Io4Pq9"


@pytest.fixture
def log_lines():
    with console_lines() as lines:
        yield lines


def refused_redeem(api, coupon, **headers):
    """A redeem with a forged token: refused with a 409, which the API logs."""
    return api.post(f"/api/v1/coupons/{coupon.pk}/redeem",
                    {"order_id": "A", "lock_token": KEY_SHAPED, "expected_version": 1,
                     "payment_id": "P"},
                    format="json", HTTP_IDEMPOTENCY_KEY="k-1", **headers)


def test_a_request_line_names_its_request_id_client_and_coupon(api, coupon, log_lines):
    response = refused_redeem(api, coupon, HTTP_X_REQUEST_ID="req-42")

    assert response.status_code == 409
    assert response["X-Request-ID"] == "req-42"
    refused = next(line for line in log_lines() if line["message"].startswith("refused"))
    assert refused["level"] == "INFO" and refused["logger"] == "api.exceptions"
    assert (refused["request_id"], refused["client"], refused["coupon_id"]) == (
        "req-42", "client:order-service", coupon.pk)
    # Django's own "Conflict: ..." line, logged after the middleware returned, too.
    conflict = next(line for line in log_lines() if line["logger"] == "django.request")
    assert conflict["request_id"] == "req-42"


@pytest.mark.parametrize("given", ["", "x" * 65, "two words", "a\nb", "<script>"])
def test_a_request_id_that_does_not_look_like_one_is_replaced(client, given):
    response = client.get("/api/v1/coupons", HTTP_X_REQUEST_ID=given)

    assert response["X-Request-ID"] != given
    assert len(response["X-Request-ID"]) == 32
    int(response["X-Request-ID"], 16)


def test_two_requests_never_share_an_id(client):
    first, second = client.get("/healthz"), client.get("/api/v1/coupons")
    assert first.get("X-Request-ID") != second["X-Request-ID"]


def test_no_key_or_token_reaches_a_line(api, service_client, coupon, log_lines):
    refused_redeem(api, coupon, HTTP_X_REQUEST_ID=KEY_SHAPED)

    text = json.dumps(log_lines())
    assert log_lines(), "the refusal was logged"
    assert KEY_SHAPED not in text and service_client[1] not in text
    assert any(line.get("request_id") == "[REDACTED]" for line in log_lines())


def test_an_exception_is_one_json_line_with_its_traceback(log_lines):
    try:
        raise ValueError(f"boom lock_token={KEY_SHAPED}")
    except ValueError:
        logging.getLogger("coupons.test").exception("it broke")

    [line] = log_lines()
    assert line["message"] == "it broke"
    assert "ValueError" in line["exception"] and KEY_SHAPED not in line["exception"]

"""A lease answers only to the service client that took it (docs/api.md).

The issue's reproductions: a second client redeemed a coupon leased to another order with a
token it should never have had (forged under the default secret), and a refund service
posted a PaymentSucceeded for another client's order. Here the token is the real one: even
so, only the lease's own client may renew, redeem or release it. Facts are the other way in:
a client granted a fact type speaks for it, and the coordinator (an internal caller) acts on
the order's lease whoever took it.
"""

import uuid

import pytest
from rest_framework.test import APIClient

from coupons.capabilities import Capability
from coupons.models import CommandRejection, CouponLock, Redemption
from coupons.services import service_client_create
from coupons.write.tokens import lease_token
from tests.command_checks import ledger, world
from tests.conftest import ALL_GRANTS, lock

pytestmark = pytest.mark.django_db

ORDER = {"order_id": "A", "user_id": "u1", "order_amount": "300.00"}
LEASE_COMMANDS = {"renew": {"lease_seconds": 600}, "redeem": {"payment_id": "P-A"},
                  "release": {"reason": "order closed"}}


def client_with(name, **grants):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {service_client_create(name=name, **grants)[1]}")
    return client


def post(client, path, body):
    return client.post(f"/api/v1/{path}", body, format="json",
                       HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))


def proof(locked, **extra) -> dict:
    return {"order_id": locked["order_id"], "lock_token": locked["lock_token"],
            "expected_version": locked["state_version"], **extra}


def api_lock(client, coupon) -> dict:
    response = post(client, f"coupons/{coupon.pk}/lock", ORDER)
    assert response.status_code == 200, response.json()
    return response.json()


def assert_lease_refused(response, command):
    assert response.status_code == 403, response.json()
    assert response.json()["error"]["code"] == "PERMISSION_DENIED"
    assert response.json()["error"]["details"] == {"reason": "LEASE_OF_ANOTHER_CLIENT"}
    rejection = CommandRejection.objects.latest("id")
    assert (rejection.op_type, rejection.error_code, rejection.actor) == (
        command.upper(), "PERMISSION_DENIED", "client:intruder",
    )


@pytest.mark.parametrize("command", LEASE_COMMANDS)
def test_another_client_cannot_use_a_lease_even_with_its_token(api, coupon, command):
    locked = api_lock(api, coupon)
    intruder = client_with("intruder", **ALL_GRANTS)
    before = world()

    response = post(intruder, f"coupons/{coupon.pk}/{command}",
                    proof(locked, **LEASE_COMMANDS[command]))

    assert_lease_refused(response, command)
    assert world() == before
    # the lease still answers to its own client
    response = post(api, f"coupons/{coupon.pk}/{command}", proof(locked, **LEASE_COMMANDS[command]))
    assert response.status_code == 200, response.json()


def test_the_lease_remembers_the_client_that_took_it(api, coupon, service_client):
    api_lock(api, coupon)

    assert CouponLock.objects.get().client == service_client[0]


def test_another_client_cannot_repeat_a_redeem_to_read_the_redemption(api, coupon):
    locked = api_lock(api, coupon)
    first = post(api, f"coupons/{coupon.pk}/redeem", proof(locked, payment_id="P-A"))
    assert first.status_code == 200
    intruder = client_with("intruder", **ALL_GRANTS)

    response = post(intruder, f"coupons/{coupon.pk}/redeem", proof(locked, payment_id="P-A"))

    assert_lease_refused(response, "redeem")
    assert "P-A" not in response.content.decode()
    again = post(api, f"coupons/{coupon.pk}/redeem", proof(locked, payment_id="P-A"))
    assert (again.status_code, again.json()["already_redeemed"]) == (200, True)


def test_a_lease_taken_by_no_client_answers_to_no_client(coupon, ctx):
    """A console user's or the coordinator's lease: its token (derivable by whoever knows the
    secret) is not enough for any client."""
    result, _ = lock(coupon, ctx, order_id="A")
    intruder = client_with("intruder", **ALL_GRANTS)
    before = world()

    response = post(intruder, f"coupons/{coupon.pk}/redeem", {
        "order_id": "A", "lock_token": lease_token(result.lock.pk), "expected_version": 2,
        "payment_id": "P-A",
    })

    assert_lease_refused(response, "redeem")
    assert world() == before


def test_a_foreign_client_is_refused_before_its_token_is_looked_at(api, coupon):
    """Same answer for a right and a wrong token: a refusal tells the intruder nothing."""
    locked = api_lock(api, coupon)
    intruder = client_with("intruder", **ALL_GRANTS)

    response = post(intruder, f"coupons/{coupon.pk}/release",
                    proof(locked, lock_token="guessed", reason="x"))

    assert_lease_refused(response, "release")


def test_refund_service_cannot_say_an_order_was_paid(api, coupon):
    """The issue's reproduction: `refund-service` posted PaymentSucceeded with payment_id
    "never-happened" for another client's order and the coordinator redeemed the coupon."""
    api_lock(api, coupon)
    refunds = client_with("refund-service", capabilities=[Capability.READ],
                          fact_types=["RefundSucceeded"])
    before = world()

    response = refunds.post("/api/v1/events", {
        "message_id": "pay-A-1", "type": "PaymentSucceeded",
        "occurred_at": "2026-06-01T12:00:00Z",
        "payload": {"order_id": "A", "payment_id": "never-happened"},
    }, format="json")

    assert response.status_code == 403
    assert response.json()["error"]["details"]["fact_type"] == "PaymentSucceeded"
    assert world() == before


def test_a_payment_fact_from_the_payment_service_redeems_the_order_services_lease(api, coupon):
    """Facts follow fact-type grants, not lease ownership: the payment service is the one
    that knows the order was paid, though the order service took the lease."""
    api_lock(api, coupon)
    payments = client_with("payment-service", fact_types=["PaymentSucceeded"])

    response = payments.post("/api/v1/events", {
        "message_id": "pay-A-1", "type": "PaymentSucceeded",
        "occurred_at": "2026-06-01T12:00:00Z",
        "payload": {"order_id": "A", "payment_id": "P-A"},
    }, format="json")

    assert response.status_code == 202
    assert response.json()["outcome"]["action"] == "REDEEMED"
    assert Redemption.objects.get().payment_id == "P-A"
    assert ledger(coupon)[-1] == ("REDEEM", "LOCKED", "USED", 2, 3)

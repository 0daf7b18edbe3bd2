"""Reproductions of roles that were once not separated, each now refused or allowed."""

import uuid

import pytest

from coupons.capabilities import Capability
from coupons.models import CouponLock, CouponTemplate
from coupons.write.tokens import lease_token
from tests.api.roles import machine, person, signed_in
from tests.command_checks import world
from tests.conftest import lock

pytestmark = pytest.mark.django_db

TEMPLATE = {"code": "anything", "name": "999 off anything", "kind": "AMOUNT_OFF",
            "face_value": "999.00", "min_order_amount": "0.00", "valid_days": 365}


def post(client, path, body):
    return client.post(f"/api/v1/{path}", body, format="json",
                       HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))


def refused(response, capability) -> dict:
    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert (error["code"], error["details"]["capability"]) == (
        "PERMISSION_DENIED", capability.value,
    )
    return error["details"]


@pytest.fixture
def locked_for_a(coupon, ctx):
    """The coupon, leased to order A: what a forged fact or a stranger's redeem would hit."""
    result, _ = lock(coupon, ctx, order_id="A")
    return {"order_id": "A", "lock_token": lease_token(result.lock.pk),
            "expected_version": result.state_version}


@pytest.fixture
def support(db):
    return signed_in(person("sue", group="support"))


def test_support_can_read_but_not_void_issue_template_lock_redeem_or_post_facts(
    support, coupon, locked_for_a, clock,
):
    friend = {"template_id": coupon.template_id, "user_id": "friend"}
    before = world()

    assert support.get(f"/api/v1/coupons/{coupon.pk}").status_code == 200
    refused(post(support, f"coupons/{coupon.pk}/void", {"expected_version": 2, "reason": "x"}),
            Capability.VOID)
    refused(post(support, "templates", TEMPLATE), Capability.MANAGE_TEMPLATES)
    refused(post(support, "coupons", friend), Capability.ISSUE)
    refused(post(support, f"coupons/{coupon.pk}/lock",
                 {"order_id": "F", "user_id": "u1", "order_amount": "999.00"}), Capability.LOCK)
    refused(post(support, f"coupons/{coupon.pk}/redeem", {**locked_for_a, "payment_id": "P"}),
            Capability.REDEEM)
    refused(post(support, "events", {"message_id": "forged", "type": "OrderClosed",
                                     "occurred_at": clock.now().isoformat(),
                                     "payload": {"order_id": "A"}}),
            Capability.POST_FACTS)

    assert world() == before  # ledger, outbox, locks, coupons, templates: all as they were
    assert CouponLock.objects.get().status == "ACTIVE"


def test_an_operator_can_void_but_not_create_templates(coupon, clock):
    operator = signed_in(person("olaf", group="operator"))

    refused(post(operator, "templates", TEMPLATE), Capability.MANAGE_TEMPLATES)
    voided = post(operator, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "risk"})

    assert voided.status_code == 200, voided.json()
    assert voided.json()["status"] == "VOID"
    assert not CouponTemplate.objects.filter(code="anything").exists()


def test_a_policy_admin_can_create_templates_but_not_void(coupon, clock):
    policy_admin = signed_in(person("pat", group="policy_admin"))
    before = world()["coupons"]

    refused(post(policy_admin, f"coupons/{coupon.pk}/void",
                 {"expected_version": 1, "reason": "x"}), Capability.VOID)
    created = post(policy_admin, "templates", TEMPLATE)

    assert created.status_code == 201, created.json()
    assert created.json()["code"] == "anything"
    assert world()["coupons"] == before


def test_a_client_without_void_cannot_void(coupon, clock):
    checkout = machine("checkout", capabilities=[Capability.LOCK, Capability.REDEEM,
                                                 Capability.RELEASE])
    before = world()

    refused(post(checkout, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "x"}),
            Capability.VOID)

    assert world() == before


def test_a_client_cannot_post_a_fact_type_it_was_not_granted(locked_for_a, clock):
    payments = machine("payments", fact_types=["PaymentSucceeded", "PaymentFailed"])
    before = world()

    details = refused(post(payments, "events", {
        "message_id": "close-A", "type": "OrderClosed", "occurred_at": clock.now().isoformat(),
        "payload": {"order_id": "A"},
    }), Capability.POST_FACTS)

    assert details["fact_type"] == "OrderClosed"
    assert world() == before
    assert CouponLock.objects.get(order_id="A").status == "ACTIVE"  # the lease was not released

"""Operators, support staff and coupons with a history to compensate, for the API tests."""

import itertools

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from coupons.evidence.tips import journal_tip
from coupons.models import CouponOperation, OperationType
from coupons.services import coupon_redeem
from refunds.models import Compensation
from tests.conftest import lock

_keys = itertools.count(1)


def staff(username, group) -> APIClient:
    user = User.objects.create_user(username, password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def alice(db):
    return staff("alice", "operator")


@pytest.fixture
def bob(db):
    return staff("bob", "operator")


@pytest.fixture
def support(db):
    return staff("sam", "support")


def post(client, path, key=None, **body):
    return client.post(f"/api/v1/{path}", body, format="json",
                       HTTP_IDEMPOTENCY_KEY=key or f"key-{next(_keys)}")


def propose(client, operation, key=None, **body):
    body.setdefault("reason", "redeemed by mistake")
    return post(client, f"coupons/{operation.coupon_id}/operations/{operation.pk}/compensate",
                key, **body)


def approve(client, compensation_id, key=None, **body):
    """As an operator who read it first: names its current version unless `seen_entry` is
    given."""
    body.setdefault("seen_entry", seen(compensation_id))
    return post(client, f"compensations/{compensation_id}/approve", key, **body)


def reject(client, compensation_id, key=None, **body):
    body.setdefault("seen_entry", seen(compensation_id))
    return post(client, f"compensations/{compensation_id}/reject", key, **body)


def seen(compensation_id) -> str:
    """Its version now; a well-formed hash for one that does not exist."""
    return journal_tip(Compensation, compensation_id) or "0" * 64


def ok(response, status=200) -> dict:
    assert response.status_code == status, response.content
    return response.json()


def error(response, status, code) -> dict:
    """Assert an error body (docs/api.md) and answer its `details`."""
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    return body["error"]["details"]


def last_op(coupon, op_type) -> CouponOperation:
    return coupon.operations.filter(op_type=op_type).latest("to_version")


@pytest.fixture
def redeemed(coupon, ctx):
    """The coupon, locked and redeemed by order-A; answers its REDEEM ledger row."""
    _, proof = lock(coupon, ctx, order_id="order-A")
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="pay-A", ctx=ctx)
    return last_op(coupon, OperationType.REDEEM)

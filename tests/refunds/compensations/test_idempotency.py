"""A compensation command arriving twice answers the first result (idempotency, docs/api.md)."""

import pytest

from coupons.models import CouponOperation, OperationType
from refunds.models import Compensation
from tests.command_checks import world
from tests.refunds.compensations.conftest import approve, error, ok, propose, reject, seen

pytestmark = pytest.mark.django_db


def test_the_same_proposal_twice_is_one_proposal(alice, redeemed):
    first = propose(alice, redeemed, key="p-1")
    before = world()

    again = propose(alice, redeemed, key="p-1")

    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert world() == before
    assert Compensation.objects.count() == 1


def test_the_same_approval_twice_appends_one_reverse(alice, bob, clock, redeemed):
    proposal = ok(propose(alice, redeemed), 201)
    shown = seen(proposal["id"])
    first = approve(bob, proposal["id"], key="a-1", note="ok", seen_entry=shown)
    clock.advance(minutes=3)
    before = world()

    again = approve(bob, proposal["id"], key="a-1", note="ok", seen_entry=shown)

    assert again.status_code == 200 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert world() == before
    assert CouponOperation.objects.filter(op_type=OperationType.REVERSE).count() == 1


def test_the_same_rejection_twice_answers_the_first(alice, bob, redeemed):
    proposal = ok(propose(alice, redeemed), 201)
    shown = seen(proposal["id"])
    first = ok(reject(bob, proposal["id"], key="r-1", note="not a mistake", seen_entry=shown))

    assert ok(reject(bob, proposal["id"], key="r-1", note="not a mistake",
                     seen_entry=shown)) == first


def test_a_refused_approval_repeated_gets_the_same_refusal(alice, redeemed):
    proposal = ok(propose(alice, redeemed), 201)

    first = error(approve(alice, proposal["id"], key="mine"), 403, "SAME_OPERATOR")
    again = approve(alice, proposal["id"], key="mine")

    assert error(again, 403, "SAME_OPERATOR") == first
    assert again["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize("command", ["propose", "approve"])
def test_the_same_key_with_another_body_is_refused(alice, bob, redeemed, command):
    proposal = ok(propose(alice, redeemed, key="k-1"), 201)
    if command == "propose":
        response = propose(alice, redeemed, key="k-1", reason="another reason")
    else:
        shown = seen(proposal["id"])
        ok(approve(bob, proposal["id"], key="k-2", note="fine", seen_entry=shown))
        response = approve(bob, proposal["id"], key="k-2", note="changed my mind",
                           seen_entry=shown)

    error(response, 422, "IDEMPOTENCY_KEY_REUSED")
    assert Compensation.objects.count() == 1


def test_a_command_without_a_key_is_refused(alice, redeemed):
    response = alice.post(
        f"/api/v1/coupons/{redeemed.coupon_id}/operations/{redeemed.pk}/compensate",
        {"reason": "oops"}, format="json",
    )

    error(response, 400, "IDEMPOTENCY_KEY_MISSING")
    assert not Compensation.objects.exists()

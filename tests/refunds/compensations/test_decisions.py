"""Deciding a proposal: four eyes, the coupon moving on, rejections, one open proposal."""

import pytest

from coupons.models import CommandRejection, OperationType
from coupons.services import coupon_void
from refunds.models import Compensation
from tests.command_checks import ledger, world
from tests.refunds.compensations.conftest import approve, error, last_op, ok, propose, reject, staff

pytestmark = pytest.mark.django_db


def rejection_log():
    return list(CommandRejection.objects.order_by("id").values_list(
        "op_type", "error_code", "actor", "coupon_id_ref"))


# --- four eyes ----------------------------------------------------------------------------


@pytest.mark.parametrize("decide", [approve, reject])
def test_the_proposer_can_neither_approve_nor_reject(alice, redeemed, decide):
    proposal = ok(propose(alice, redeemed), 201)
    before = world()

    details = error(decide(alice, proposal["id"], note="looks right to me"), 403,
                    "SAME_OPERATOR")

    assert details == {"compensation_id": proposal["id"], "proposed_by": "user:alice"}
    assert world() == before
    assert Compensation.objects.get().status == "PROPOSED"
    assert rejection_log()[-1] == (
        "COMP_REJECT" if decide is reject else "COMP_APPROVE", "SAME_OPERATOR", "user:alice",
        redeemed.coupon_id,
    )


def test_a_superuser_who_proposed_cannot_approve_either(redeemed):
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    root = APIClient()
    root.force_login(User.objects.create_superuser("root", "root@x.invalid", "pw"))
    proposal = ok(propose(root, redeemed), 201)

    error(approve(root, proposal["id"]), 403, "SAME_OPERATOR")


def test_support_can_neither_propose_nor_decide(alice, support, redeemed):
    details = error(propose(support, redeemed), 403, "PERMISSION_DENIED")
    assert details["capability"] == "propose_compensation"

    proposal = ok(propose(alice, redeemed), 201)
    for decide in (approve, reject):
        details = error(decide(support, proposal["id"], note="no"), 403, "PERMISSION_DENIED")
        assert details["capability"] == "approve_compensation"

    assert Compensation.objects.get().status == "PROPOSED"
    assert rejection_log() == [
        ("COMP_PROPOSE", "PERMISSION_DENIED", "user:sam", redeemed.coupon_id),
        ("COMP_APPROVE", "PERMISSION_DENIED", "user:sam", redeemed.coupon_id),
        ("COMP_REJECT", "PERMISSION_DENIED", "user:sam", redeemed.coupon_id),
    ]


def test_a_service_client_can_neither_propose_nor_approve_even_with_every_grant(
    alice, api, redeemed,
):
    # `api` holds every grant a client can be given (create_service_client --allow all).
    error(propose(api, redeemed), 403, "PERMISSION_DENIED")
    proposal = ok(propose(alice, redeemed), 201)

    details = error(approve(api, proposal["id"]), 403, "PERMISSION_DENIED")

    assert details["capability"] == "approve_compensation"
    assert ledger(redeemed.coupon)[-1][0] == "REDEEM"
    assert [row[:3] for row in rejection_log()] == [
        ("COMP_PROPOSE", "PERMISSION_DENIED", "client:order-service"),
        ("COMP_APPROVE", "PERMISSION_DENIED", "client:order-service"),
    ]


def test_an_anonymous_caller_is_told_to_sign_in(redeemed):
    from rest_framework.test import APIClient

    error(propose(APIClient(), redeemed), 401, "NOT_AUTHENTICATED")


# --- the coupon moved on ------------------------------------------------------------------


def test_approval_is_refused_when_the_coupon_moved_on_and_nothing_is_written(
    alice, bob, redeemed, ctx,
):
    coupon = redeemed.coupon
    proposal = ok(propose(alice, redeemed), 201)
    coupon_void(coupon_id=coupon.pk, expected_version=3, reason="campaign closed", ctx=ctx)
    voided = last_op(coupon, OperationType.VOID)
    before = world()

    details = error(approve(bob, proposal["id"]), 409, "VERSION_CONFLICT")

    assert (details["current_state"], details["current_version"]) == ("VOID", 4)
    assert details["operation_version"] == 3
    assert details["moved_on_by"] == {"operation_id": voided.pk, "op_type": "VOID",
                                      "to_version": 4}
    assert world() == before
    assert Compensation.objects.get().status == "PROPOSED"
    assert rejection_log()[-1] == ("COMP_APPROVE", "VERSION_CONFLICT", "user:bob", coupon.pk)


def test_a_money_compensation_in_between_does_not_count_as_moving_on(alice, bob, redeemed):
    money = ok(propose(alice, redeemed, amount="5.00", reason="delivery was late"), 201)
    ok(approve(bob, money["id"]))
    reversal = ok(propose(alice, redeemed), 201)

    row = ok(approve(bob, reversal["id"]))["resulting_operation"]

    assert (row["op_type"], row["from_version"], row["to_state"]) == ("REVERSE", 4, "AVAILABLE")
    assert [step[0] for step in ledger(redeemed.coupon)][-2:] == ["COMPENSATE", "REVERSE"]


def test_an_operation_already_reversed_cannot_be_proposed_again(alice, bob, redeemed):
    first = ok(approve(bob, ok(propose(alice, redeemed), 201)["id"]))

    details = error(propose(alice, redeemed), 409, "INVALID_STATE")

    assert details["reversed_by"] == first["resulting_operation"]["id"]


# --- one decision, one open proposal ------------------------------------------------------


def test_one_open_proposal_per_operation(alice, bob, redeemed):
    first = ok(propose(alice, redeemed), 201)

    details = error(propose(bob, redeemed, amount="3.00"), 409, "COMPENSATION_PENDING")

    assert details == {"compensation_id": first["id"], "operation_id": redeemed.pk}
    assert Compensation.objects.count() == 1


def test_a_decided_compensation_cannot_be_decided_again(alice, bob, redeemed):
    proposal = ok(propose(alice, redeemed), 201)
    ok(approve(bob, proposal["id"], key="first"))
    carol = staff("carol", "operator")
    before = world()

    for decide in (approve, reject):
        details = error(decide(carol, proposal["id"], note="again"), 409, "INVALID_STATE")
        assert details["current_state"] == "APPROVED"
        assert details["decided_by"] == "user:bob"
    assert world() == before


def test_rejection_needs_a_note_writes_no_ledger_row_and_frees_the_operation(
    alice, bob, clock, redeemed,
):
    proposal = ok(propose(alice, redeemed), 201)
    error(reject(bob, proposal["id"], key="no-note"), 400, "VALIDATION_ERROR")
    before = world()

    body = ok(reject(bob, proposal["id"], key="with-note", note="the customer did order it"))

    assert (body["status"], body["decided_by"], body["decision_note"]) == (
        "REJECTED", "user:bob", "the customer did order it",
    )
    assert body["resulting_operation"] is None
    assert world() == before
    # A rejected proposal does not block a better-argued one.
    assert ok(propose(alice, redeemed, reason="store confirmed the mistake"), 201)["id"] != (
        proposal["id"])


def test_unknown_compensation_is_not_found(bob):
    error(approve(bob, 999), 404, "NOT_FOUND")
    error(bob.get("/api/v1/compensations/999"), 404, "NOT_FOUND")

"""GET compensations and compensations/{id}: filters, and amounts only for case details."""

import pytest

from coupons.models import OperationType
from coupons.services import coupon_issue, coupon_void
from tests.refunds.compensations.conftest import approve, last_op, ok, propose, seen, staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def three(alice, bob, redeemed, template, ctx):
    """A money proposal, an approved reversal of a void on a second coupon, a rejection."""
    money = ok(propose(alice, redeemed, amount="9.99", reason="late delivery"), 201)
    other = coupon_issue(template_id=template.pk, user_id="u2", ctx=ctx).coupon
    coupon_void(coupon_id=other.pk, expected_version=1, reason="mistake", ctx=ctx)
    reversal = ok(propose(alice, last_op(other, OperationType.VOID)), 201)
    ok(approve(bob, reversal["id"]))
    return money, reversal, other


def ids(client, query=""):
    response = ok(client.get(f"/api/v1/compensations?{query}"))
    return [row["id"] for row in response["results"]]


def test_list_newest_first_and_filters(bob, three, redeemed, clock):
    money, reversal, other = three

    assert ids(bob) == [reversal["id"], money["id"]]
    assert ids(bob, "status=APPROVED") == [reversal["id"]]
    assert ids(bob, "status=PROPOSED") == [money["id"]]
    assert ids(bob, f"coupon_id={other.pk}") == [reversal["id"]]
    assert ids(bob, "order_id=order-A") == [money["id"]]
    assert ids(bob, "kind=MONEY&status=APPROVED") == []


def test_a_bad_filter_is_a_validation_error(bob, three):
    response = bob.get("/api/v1/compensations?status=MAYBE")
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_operators_see_amounts(bob, three):
    money, _, _ = three

    body = ok(bob.get(f"/api/v1/compensations/{money['id']}"))

    assert (body["amount"], body["redacted"]) == ("9.99", [])


HIDDEN = ["amount", "reason", "decision_note"]  # The reason and note are details


def test_support_reads_compensations_without_amounts(support, bob, three):
    money, reversal, _ = three
    ok(approve(bob, money["id"]))

    rows = ok(support.get("/api/v1/compensations"))["results"]

    assert [(row["id"], row["amount"], row["redacted"]) for row in rows] == [
        (reversal["id"], None, HIDDEN), (money["id"], None, HIDDEN),
    ]
    detail = ok(support.get(f"/api/v1/compensations/{money['id']}"))
    assert detail["resulting_operation"]["op_type"] == "COMPENSATE"
    assert detail["resulting_operation"]["amount"] is None
    assert detail["reason"] is None and detail["resulting_operation"]["reason"] is None


def test_an_approver_without_case_details_gets_no_amount_even_in_the_answer(alice, redeemed):
    from django.contrib.auth.models import Group, Permission

    reviewers = Group.objects.create(name="reviewers")
    reviewers.permissions.add(
        *Permission.objects.filter(codename__in=["read_coupons", "approve_compensation"]))
    dana = staff("dana", "reviewers")
    money = ok(propose(alice, redeemed, amount="9.99"), 201)

    shown = seen(money["id"])
    body = ok(approve(dana, money["id"], key="dana-1", seen_entry=shown))
    replay = approve(dana, money["id"], key="dana-1", seen_entry=shown)

    assert (body["amount"], body["resulting_operation"]["amount"]) == (None, None)
    assert replay["Idempotent-Replayed"] == "true"
    assert ok(replay)["amount"] is None


def test_the_timeline_shows_the_proposal_the_reverse_row_and_the_decision(
    alice, bob, clock, redeemed,
):
    proposal = ok(propose(alice, redeemed, reason="wrong order"), 201)
    clock.advance(minutes=7)
    ok(approve(bob, proposal["id"], note="store confirmed"))

    timeline = ok(bob.get(f"/api/v1/coupons/{redeemed.coupon_id}/timeline"))["results"]

    assert [entry["title"] for entry in timeline[-3:]] == [
        "Compensation REVERSE_OPERATION (APPROVED)",
        "REVERSE USED→AVAILABLE (v4)",
        f"Compensation #{proposal['id']} approved",
    ]
    assert timeline[-3]["details"]["proposed_by"] == "user:alice"
    assert timeline[-1]["details"] == {"decided_by": "user:bob", "note": "store confirmed",
                                       "operation_id": timeline[-2]["id"]}

"""Approving or rejecting a compensation names the version its operator read (`seen_entry`,
the `journal_tip` of the read): one that moved since is refused with 409 EVIDENCE_CHANGED and
the refusal is recorded with the decider (tests/refunds/test_approval_names_version.py for
refund decisions)."""

import pytest

from coupons.models import CommandRejection, CouponOperation, OperationType
from refunds.models import Compensation
from tests.refunds.compensations.conftest import approve, error, ok, propose, reject, seen
from tests.refunds.conftest import moved_past_the_services

pytestmark = pytest.mark.django_db


def test_the_read_answers_the_version_and_an_approval_of_it_runs(alice, bob, redeemed):
    proposal = ok(propose(alice, redeemed, amount="20.00"), 201)

    read = ok(bob.get(f"/api/v1/compensations/{proposal['id']}"))
    [listed] = ok(bob.get("/api/v1/compensations"))["results"]

    assert read["journal_tip"] == listed["journal_tip"] == seen(proposal["id"])
    assert ok(approve(bob, proposal["id"], seen_entry=read["journal_tip"]))["status"] == \
        "APPROVED"


@pytest.mark.parametrize("verb", ["approve", "reject"])
def test_a_compensation_changed_after_it_was_read_is_not_decided(alice, bob, redeemed, verb):
    proposal = ok(propose(alice, redeemed, amount="20.00"), 201)
    read = ok(bob.get(f"/api/v1/compensations/{proposal['id']}"))
    # A step the journal allows, appended by a stolen login: the row still folds.
    moved_past_the_services(Compensation, proposal["id"], "approved", decision_note="ok")

    decide = approve if verb == "approve" else reject
    details = error(decide(bob, proposal["id"], note="fine", seen_entry=read["journal_tip"]),
                    409, "EVIDENCE_CHANGED")

    assert details["seen_entry"] == read["journal_tip"] != details["journal_tip"]
    assert Compensation.objects.get().status == "PROPOSED"
    assert not CouponOperation.objects.filter(op_type=OperationType.COMPENSATE).exists()
    refusal = CommandRejection.objects.get(error_code="EVIDENCE_CHANGED")
    assert (refusal.op_type, refusal.actor) == (f"COMP_{verb.upper()}", "user:bob")


def test_an_approval_without_the_version_is_refused_as_bad_input(alice, bob, redeemed):
    proposal = ok(propose(alice, redeemed, amount="20.00"), 201)

    details = error(approve(bob, proposal["id"], seen_entry=None), 400, "VALIDATION_ERROR")

    assert list(details) == ["seen_entry"]
    assert Compensation.objects.get().status == "PROPOSED"

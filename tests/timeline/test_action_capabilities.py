"""Each console action checks its own capability, not a group that happens to hold it, and acts
only on an explicit confirmation.

The matrix (test_console_matrix.py) asks per role; while proposing and approving sit in one
group, an action asking for the wrong one of the two passes it. Here each person holds
everything an operator holds but the action's capability.
"""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from coupons.capabilities import Capability
from coupons.evidence.tips import journal_tip
from coupons.models import CaseStatus, ConflictCase, CouponOperation
from refunds.models import Compensation
from tests.timeline.queue_helpers import new_key, press, text
from tests.timeline.queue_objects import fresh_coupon, late_payment_case, proposal, redeemed

pytestmark = pytest.mark.django_db

PROPOSE, APPROVE = Capability.PROPOSE_COMPENSATION, Capability.APPROVE_COMPENSATION


def operator_without(capability, make_person, client):
    """Signed in as a person granted the operator group's capabilities except `capability`."""
    operators = Group.objects.get(name="operator").permissions.exclude(codename=capability.value)
    group = Group.objects.create(name=f"operators without {capability.value}")
    group.permissions.add(*operators)
    client.force_login(make_person(group.name, "carol"))
    return client


def ops(coupon):
    return list(CouponOperation.objects.filter(coupon=coupon).order_by("to_version")
                .values_list("op_type", flat=True))


@pytest.mark.parametrize("name", ["compensation_approve", "compensation_reject"])
def test_deciding_a_compensation_needs_approve_compensation(name, client, make_person, coupon):
    compensation = proposal(coupon)
    carol = operator_without(APPROVE, make_person, client)  # may still propose

    answer = press(carol, name, compensation_id=compensation.pk, note="looks right")

    assert answer.status_code == 403
    compensation.refresh_from_db()
    assert compensation.status == Compensation.Status.PROPOSED
    assert ops(coupon) == ["ISSUE", "LOCK", "REDEEM"]


def test_proposing_a_compensation_needs_propose_compensation(client, make_person, coupon):
    operation = redeemed(coupon)
    carol = operator_without(PROPOSE, make_person, client)

    answer = press(carol, "compensation_propose", coupon_id=coupon.pk,
                   operation_id=operation.pk, reason="redeemed by mistake")

    assert answer.status_code == 403
    assert not Compensation.objects.exists()


def test_a_person_with_approve_but_not_propose_may_approve(client, make_person, coupon):
    compensation = proposal(coupon)
    carol = operator_without(PROPOSE, make_person, client)

    answer = press(carol, "compensation_approve", compensation_id=compensation.pk, note="ok")

    assert answer.status_code == 200
    compensation.refresh_from_db()
    assert (compensation.status, compensation.decided_by) == ("APPROVED", "user:carol")
    assert ops(coupon) == ["ISSUE", "LOCK", "REDEEM", "REVERSE"]


def bulk_dismiss(client, cases):
    return client.post(reverse("console:case_bulk"), {
        "ids": [str(case.pk) for case in cases], "verb": "DISMISS",
        "note": "paid twice, refunded by the bank", "bulk_key": new_key(), "confirmed": "yes"})


def test_bulk_case_resolution_needs_resolve_cases_not_refund_approval(client, make_person,
                                                                      template):
    cases = [late_payment_case(fresh_coupon(template, f"u{n}"), order_id=f"order-{n}")
             for n in range(2)]
    carol = operator_without(Capability.APPROVE_REFUNDS, make_person, client)

    answer = bulk_dismiss(carol, cases)

    assert answer.status_code == 200
    assert "2 items: 2 done, 0 refused." in text(answer)
    assert {ConflictCase.objects.get(pk=case.pk).status for case in cases} == {
        CaseStatus.DISMISSED}


def test_bulk_case_resolution_is_refused_without_resolve_cases(client, make_person, template):
    case = late_payment_case(fresh_coupon(template))
    carol = operator_without(Capability.RESOLVE_CASES, make_person, client)

    assert bulk_dismiss(carol, [case]).status_code == 403
    assert ConflictCase.objects.get(pk=case.pk).status == CaseStatus.OPEN


@pytest.mark.parametrize("confirmed", ["no", "", "true", "YES"])
def test_a_confirm_form_acts_only_on_confirmed_yes(confirmed, signed_in, coupon):
    compensation = proposal(coupon)
    bob = signed_in("operator", "bob")
    url = reverse("console:compensation_approve", kwargs={"compensation_id": compensation.pk})

    answer = bob.post(url, {"idempotency_key": new_key(), "note": "ok", "confirmed": confirmed,
                            "seen_entry": journal_tip(Compensation, compensation.pk)})

    assert answer.status_code == 200
    assert "Yes, approve compensation" in text(answer)
    compensation.refresh_from_db()
    assert compensation.status == Compensation.Status.PROPOSED
    assert ops(coupon) == ["ISSUE", "LOCK", "REDEEM"]

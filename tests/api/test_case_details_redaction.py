"""Least-privilege reads: case notes, case evidence, compensation amounts and others' stored
answers are shown only to holders of view_case_details (operators, superusers)."""

import pytest
from django.contrib.auth.models import Group, Permission
from django.test import Client
from django.urls import reverse

from coupons.api.event_serializers import CaseOutput
from coupons.capabilities import Capability
from coupons.models import ConflictCase, IdempotencyRecord
from refunds.models import Compensation
from tests.api.roles import machine, person, signed_in
from tests.conftest import lock

pytestmark = pytest.mark.django_db

NOTE = "Customer called, promised 30.00 back on card ending 4242"


@pytest.fixture
def settled_case(coupon, ctx, send):
    """Order A paid after its coupon went to order B; an operator refunded A's discount."""
    lock(coupon, ctx, order_id="A")
    send("OrderClosed", order_id="A")
    lock(coupon, ctx, order_id="B")
    case_id = send("PaymentSucceeded", order_id="A", payment_id="P-A")["outcome"]["case_id"]
    operator = signed_in(person("olga", group="operator"))
    response = operator.post(f"/api/v1/cases/{case_id}/resolve",
                             {"action": "APPLY", "note": NOTE}, format="json",
                             HTTP_IDEMPOTENCY_KEY="apply")
    assert response.status_code == 200, response.json()
    return ConflictCase.objects.get(pk=case_id)


def timeline(client, coupon) -> list[dict]:
    response = client.get(f"/api/v1/coupons/{coupon.pk}/timeline")
    assert response.status_code == 200, response.json()
    return response.json()["results"]


def details_of(entries, kind) -> list[dict]:
    return [entry["details"] for entry in entries if entry["kind"] == kind]


@pytest.mark.parametrize("reader", ["support", "read-only client"])
def test_support_and_clients_see_cases_and_compensations_in_the_timeline_without_details(
    settled_case, reader,
):
    client = (signed_in(person("sue", group="support")) if reader == "support"
              else machine("reader", capabilities=[Capability.READ]))

    entries = timeline(client, settled_case.coupon)

    # Codes (the recommendation, the compensation's kind and status) are no detail to hide.
    assert details_of(entries, "case") == [{"order_id": "A", "summary": settled_case.summary,
                                            "recommendation": "ORDER_DISCOUNT_REFUND"},
                                           {"resolved_by": "user:olga"}]
    assert details_of(entries, "compensation") == [{
        "order_id": "A", "proposed_by": "user:olga", "compensation_kind": "ORDER_DISCOUNT_REFUND",
        "compensation_status": "PROPOSED"}]
    assert "30.00" not in str(details_of(entries, "compensation"))
    assert "Customer called" not in str(entries)


def test_an_operator_sees_the_note_and_the_amount(settled_case):
    entries = timeline(signed_in(person("olaf", group="operator")), settled_case.coupon)

    assert details_of(entries, "case")[1] == {"resolved_by": "user:olga",
                                              "resolution_note": NOTE}
    compensation = Compensation.objects.get()
    assert details_of(entries, "compensation") == [{
        "order_id": "A", "amount": "30.00", "reason": compensation.reason,
        "proposed_by": "user:olga", "compensation_kind": "ORDER_DISCOUNT_REFUND",
        "compensation_status": "PROPOSED",
    }]


def test_the_case_answer_hides_notes_and_evidence_unless_told_the_reader_may_see_them(
    settled_case,
):
    assert {"resolution_note", "evidence"} & set(CaseOutput(settled_case).data) == set()
    shown = CaseOutput(settled_case, context={"can_see_details": True}).data
    assert (shown["resolution_note"], shown["evidence"]["order_discount"]) == (NOTE, "30.00")


def test_a_case_clerk_without_view_case_details_lists_cases_without_notes(settled_case):
    clerks = Group.objects.create(name="case clerks")
    clerks.permissions.add(Permission.objects.get(codename=Capability.RESOLVE_CASES.value))
    clerk = signed_in(person("carl", group="case clerks"))
    operator = signed_in(person("olaf", group="operator"))

    [as_clerk] = clerk.get("/api/v1/cases").json()["results"]
    [as_operator] = operator.get("/api/v1/cases").json()["results"]

    assert set(as_operator) - set(as_clerk) == {"resolution_note", "evidence"}
    assert as_operator["resolution_note"] == NOTE
    assert as_clerk["status"] == as_operator["status"] == "RESOLVED"


# --- the admin --------------------------------------------------------------------------------


def admin_page(username, group, name, *args):
    client = Client()
    client.force_login(person(username, group=group))
    response = client.get(reverse(f"admin:{name}", args=args))
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(("page", "secret"), [
    ("coupons_conflictcase_change", NOTE),
    ("refunds_compensation_changelist", "30.00"),
    ("refunds_compensation_change", "30.00"),
    ("coupons_idempotencyrecord_change", NOTE),  # the resolve answer stored under its key
])
def test_the_admin_shows_details_to_operators_only(settled_case, page, secret):
    pk = {"coupons_conflictcase_change": settled_case.pk,
          "refunds_compensation_change": Compensation.objects.get().pk,
          "coupons_idempotencyrecord_change": IdempotencyRecord.objects.get(key="apply").pk,
          }.get(page)
    args = [pk] if pk else []

    assert secret in admin_page("olaf", "operator", page, *args)
    assert secret not in admin_page("sue", "support", page, *args)

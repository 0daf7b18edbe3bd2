"""Compensation reasons and decision notes reach only view_case_details.

Before: GET /api/v1/compensations/{id} as support or a read-only client answered
`"amount": null, "redacted": ["amount"]` and the full reason (and the decision note), and the
REVERSE / COMPENSATE ledger row an approval appended repeated the reason in the ledger API, the
timeline and the console's ledger table.
"""

import pytest
from django.test import Client
from django.urls import reverse

from coupons.capabilities import Capability
from coupons.models import OperationType
from refunds.models import Compensation
from tests.api.roles import machine, person, signed_in
from tests.refunds.compensations.conftest import approve, last_op, ok, propose, reject

pytestmark = pytest.mark.django_db

REASON = "Customer Ada Lovelace, card 4242, called twice"
NOTE = "Checked with finance: pay 12.00 by bank transfer"


@pytest.fixture
def decided(coupon, redeemed, alice, bob):
    """A reversal of the REDEEM, approved, and a money compensation, rejected."""
    reversal = ok(propose(alice, redeemed, reason=REASON), 201)
    ok(approve(bob, reversal["id"], note=NOTE))
    money = ok(propose(alice, last_op(coupon, OperationType.REVERSE), reason=REASON,
                      amount="12.00"), 201)
    ok(reject(bob, money["id"], note=NOTE))
    return coupon


def readers():
    return {
        "support": signed_in(person("sue", group="support")),
        "read-only client": machine("reader", capabilities=[Capability.READ]),
    }


@pytest.mark.parametrize("reader", ["support", "read-only client"])
def test_the_compensation_answers_hide_reason_and_note(decided, reader):
    client = readers()[reader]

    listed = client.get("/api/v1/compensations").json()["results"]
    one = [client.get(f"/api/v1/compensations/{c.pk}").json()
           for c in Compensation.objects.all()]

    for body in [*listed, *one]:
        assert body["reason"] is None and body["decision_note"] is None
        assert body["amount"] is None
        assert body["redacted"] == ["amount", "reason", "decision_note"]
        if body["resulting_operation"]:
            assert body["resulting_operation"]["reason"] is None
    assert REASON not in str(listed + one) and NOTE not in str(listed + one)


@pytest.mark.parametrize("reader", ["support", "read-only client"])
def test_the_ledger_and_timeline_hide_the_reversal_rows_reason(decided, reader):
    client = readers()[reader]

    ledger = client.get(f"/api/v1/coupons/{decided.pk}/operations").json()["results"]
    timeline = client.get(f"/api/v1/coupons/{decided.pk}/timeline").json()["results"]

    [reverse_row] = [row for row in ledger if row["op_type"] == "REVERSE"]
    assert reverse_row["reason"] is None and reverse_row["redacted"] == ["reason"]
    assert [row["redacted"] for row in ledger if row["op_type"] != "REVERSE"] == [[], [], []]
    assert REASON not in str(ledger) + str(timeline)
    assert NOTE not in str(timeline)


def test_an_operator_still_sees_them(decided):
    operator = signed_in(person("olaf", group="operator"))

    ledger = operator.get(f"/api/v1/coupons/{decided.pk}/operations").json()["results"]
    timeline = operator.get(f"/api/v1/coupons/{decided.pk}/timeline").json()["results"]
    [approved, rejected] = sorted(
        (operator.get(f"/api/v1/compensations/{c.pk}").json()
         for c in Compensation.objects.all()), key=lambda c: c["id"])

    assert REASON in [row for row in ledger if row["op_type"] == "REVERSE"][0]["reason"]
    assert REASON in str(timeline) and NOTE in str(timeline)
    assert (approved["reason"], approved["decision_note"]) == (REASON, NOTE)
    assert rejected["amount"] == "12.00" and rejected["redacted"] == []


@pytest.mark.parametrize("path", ["coupon", "compensations"])
def test_the_console_hides_them_from_support(decided, path):
    url = (reverse("console:coupon", args=[decided.pk]) if path == "coupon"
           else reverse("console:compensations") + "?status=all")
    support, operator = Client(), Client()
    support.force_login(person("sue", group="support"))
    operator.force_login(person("olaf", group="operator"))

    seen_by_support = support.get(url).content.decode()
    seen_by_operator = operator.get(url).content.decode()

    assert REASON not in seen_by_support and NOTE not in seen_by_support
    assert REASON in seen_by_operator


def test_the_admin_hides_the_reversal_rows_reason(decided):
    row = decided.operations.get(op_type=OperationType.REVERSE)
    url = reverse("admin:coupons_couponoperation_change", args=[row.pk])
    support, operator = Client(), Client()
    support.force_login(person("sue", group="support"))
    operator.force_login(person("olaf", group="operator"))

    assert REASON not in support.get(url).content.decode()
    assert REASON in operator.get(url).content.decode()

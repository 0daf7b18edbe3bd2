"""What an answer passes on as stored JSON has a declared shape, not an open record: a refund
decision's `facts` and `compensation`, a case's `evidence`, an error's `details`. Real answers
are validated with every declared object closed, so a stored key the schema does not name (or
names with another type) fails here."""

import json
from datetime import timedelta
from decimal import Decimal
from io import StringIO
from types import SimpleNamespace

import jsonschema
import pytest
from django.conf import settings
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator

from coupons.models import FactType, FindingKind
from coupons.services import coupon_issue
from refunds.services.refund_receive import refund_receive
from tests.api.test_cases_api import late_payment, operator  # noqa: F401 (fixtures)
from tests.conftest import START, lock
from tests.contract.test_schema_agrees import declared_only, strictly_allows
from tests.coupons.events.test_presale import deposit, final_payment, presale_template
from tests.coupons.events.test_presale import issue as presale_issue
from tests.coupons.safety.breakage import redeemed, two_successful_redemptions, version_gap
from tests.operations.reconciliation.conftest import (
    closed_order_still_locked,
    fact_without_handler,
    reconcile,
)
from tests.operations.reconciliation.test_checks import executed_return_without_its_command
from tests.refunds.conftest import redeem

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


def closed_allows(schema, component: str, value) -> bool:
    closed = declared_only(json.loads(json.dumps(schema["components"])))
    document = {"$ref": f"#/components/schemas/{component}", "components": closed}
    return jsonschema.Draft4Validator(document).is_valid(value)


def answer_allows(schema, component: str, value) -> bool:
    return strictly_allows(schema, component, value)


def test_a_refund_decisions_facts_and_compensation_are_declared(schema, api, coupon, ctx):
    redeem(coupon, ctx)
    answer = api.post("/api/v1/refunds", {
        "refund_id": "r-1", "order_id": "order-A", "payment_id": "pay-order-A",
        "refund_amount": "270.00", "refund_type": "FULL"}, format="json",
        HTTP_IDEMPOTENCY_KEY="k-shapes")
    [decision] = answer.json()["decisions"]
    fetched = api.get(f"/api/v1/refunds/{decision['id']}").json()
    facts = fetched["coupon_decision"]["facts"]

    assert answer.status_code == 201
    assert set(facts) == set(schema["components"]["schemas"]["DecisionFacts"]["properties"])
    assert closed_allows(schema, "DecisionFacts", facts)
    assert closed_allows(schema, "CompensationDoc", fetched["coupon_decision"]["compensation"])
    assert answer_allows(schema, "RefundDecisionOutput", fetched)
    assert not closed_allows(schema, "DecisionFacts", {**facts, "risk_flag": "no"})
    assert not closed_allows(schema, "DecisionFacts", {**facts, "refunded_share": 1})


@pytest.mark.parametrize(("compensation", "allowed"), [
    ({}, True), ({"template_id": 3}, True), ({"amount": "12.00"}, True),
    ({"amount": 12}, False), ({"template_id": "3"}, False)])
def test_a_compensation_rules_gift_is_declared(schema, compensation, allowed):
    assert closed_allows(schema, "CompensationDoc", compensation) is allowed


def test_a_late_payments_case_evidence_is_declared(schema, late_payment, operator):  # noqa: F811
    case = late_payment()

    [answer] = [row for row in operator.get("/api/v1/cases").json()["results"]
                if row["id"] == case.pk]

    assert answer["evidence"]["refused_with"]
    assert closed_allows(schema, "CaseEvidence", answer["evidence"])
    assert answer_allows(schema, "CaseOutput", answer)
    assert not closed_allows(schema, "CaseEvidence", {**answer["evidence"],
                                                      "coupon_version": "3"})


def test_a_presale_deposits_case_evidence_is_declared(schema, api, send, coupon, ctx, operator):  # noqa: F811
    lock(coupon, ctx, order_id="order-X")  # another order holds it: the deposit's LOCK refused
    outcome = send("DepositPaid", order_id="PS-1", coupon_id=coupon.pk, user_id=coupon.user_id,
                   order_amount="1000.00",
                   final_payment_deadline=(START + timedelta(days=40)).isoformat())["outcome"]

    [answer] = [row for row in operator.get("/api/v1/cases").json()["results"]
                if row["id"] == outcome["case_id"]]

    assert outcome["action"] == "CASE_OPENED", outcome
    assert {"error_details", "final_payment_deadline", "order_amount"} <= set(answer["evidence"])
    assert closed_allows(schema, "CaseEvidence", answer["evidence"])


def test_a_conflicts_details_are_declared(schema, api, coupon):
    answer = api.post(f"/api/v1/coupons/{coupon.pk}/void",
                      {"expected_version": 9, "reason": "risk"}, format="json",
                      HTTP_IDEMPOTENCY_KEY="k-conflict")
    error = answer.json()["error"]
    details = schema["components"]["schemas"]["ErrorDetail"]["properties"]["details"]

    assert answer.status_code == 409
    assert error["code"] == "VERSION_CONFLICT"
    assert {"current_state", "current_version"} <= set(details["properties"])
    assert answer_allows(schema, "ErrorOutput", answer.json())
    assert not answer_allows(schema, "ErrorOutput", {"error": {
        **error, "details": {**error["details"], "current_version": "1"}}})


def test_a_validation_errors_field_names_stay_open(schema, api, coupon):
    answer = api.post(f"/api/v1/coupons/{coupon.pk}/void", {"expected_version": 1},
                      format="json", HTTP_IDEMPOTENCY_KEY="k-missing")

    assert answer.status_code == 400
    assert "reason" in answer.json()["error"]["details"]
    assert answer_allows(schema, "ErrorOutput", answer.json())


def test_every_timeline_entrys_details_are_declared(schema, api, late_payment, operator, ctx):  # noqa: F811
    case = late_payment()
    operation = case.coupon.operations.order_by("pk").first()
    proposed = operator.post(
        f"/api/v1/coupons/{case.coupon_id}/operations/{operation.pk}/compensate",
        {"reason": "paid twice", "amount": "5.00"}, format="json",
        HTTP_IDEMPOTENCY_KEY="k-propose")
    refunded = coupon_issue(template_id=case.coupon.template_id, user_id="u1", ctx=ctx).coupon
    redeem(refunded, ctx)
    api.post("/api/v1/refunds", {
        "refund_id": "r-1", "order_id": "order-A", "payment_id": "pay-order-A",
        "refund_amount": "270.00", "refund_type": "FULL"}, format="json",
        HTTP_IDEMPOTENCY_KEY="k-refund")

    entries = [entry for coupon_id in (case.coupon_id, refunded.pk) for entry in operator.get(
        f"/api/v1/coupons/{coupon_id}/timeline", {"page_size": 200}).json()["results"]]

    assert proposed.status_code == 201, proposed.json()
    assert {"operation", "refusal", "fact", "case", "compensation", "refund"} <= {
        entry["kind"] for entry in entries}
    for entry in entries:
        assert closed_allows(schema, "TimelineDetails", entry["details"]), entry
        assert answer_allows(schema, "TimelineEntryOutput", entry), entry
    assert not closed_allows(schema, "TimelineDetails", {"bogus": "x"})
    assert not closed_allows(schema, "TimelineDetails", {"to_version": "3"})



def paid_not_redeemed(f):
    lock(f.coupon, f.ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.PAYMENT_SUCCEEDED, payment_id="P-A")


def ghost_and_double_consumption(f):
    f.broken_on_purpose.add(two_successful_redemptions(f.template, f.ctx).pk)


def return_not_advanced(f):
    executed_return_without_its_command(redeemed(f.template, f.ctx))


def return_event_unpublished(f):
    redeemed(f.template, f.ctx)
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=f.ctx)
    f.clock.advance(seconds=settings.COUPONS["RECONCILE_UNPUBLISHED_GRACE_SECONDS"] + 1)


def ledger_gap(f):
    f.broken_on_purpose.add(version_gap(f.template, f.ctx).pk)


def deposit_not_bound(f):
    coupon = presale_issue(presale_template("presale-taken"))
    lock(coupon, f.ctx, order_id="OTHER")
    deposit(f.send, coupon)
    final_payment(f.send)


def from_the_exports(f):
    """A paid order that never bound its coupon, and its payment never sent as a fact."""
    (f.tmp_path / "orders.csv").write_text(f"order_id,coupon_id,status\nORD-1,{f.coupon.pk},PAID\n")
    (f.tmp_path / "payments.json").write_text(json.dumps([{
        "payment_id": "P-1", "order_id": "ORD-1", "kind": "PAYMENT", "status": "SUCCEEDED",
        "amount": "270.00"}]))
    call_command("reconcile", orders=str(f.tmp_path / "orders.csv"),
                 payments=str(f.tmp_path / "payments.json"), stdout=StringIO())


FINDINGS = {
    paid_not_redeemed: {"PAID_NOT_REDEEMED"},
    closed_order_still_locked: {"CLOSED_STILL_LOCKED"},
    ghost_and_double_consumption: {"GHOST_REDEMPTION", "DOUBLE_CONSUMPTION"},
    return_not_advanced: {"RETURN_NOT_ADVANCED"},
    return_event_unpublished: {"RETURN_EVENT_UNPUBLISHED"},
    ledger_gap: {"LEDGER_GAP"},
    deposit_not_bound: {"DEPOSIT_NOT_BOUND"},
    from_the_exports: {"PAID_WITHOUT_BINDING", "FACT_NEVER_SENT"},
}


def test_every_kind_of_finding_is_told_by_one_of_these():
    assert set().union(*FINDINGS.values()) == set(FindingKind.values)


@pytest.mark.parametrize("scenario", FINDINGS, ids=[s.__name__ for s in FINDINGS])
def test_a_reconciliation_findings_evidence_is_declared(schema, scenario, request, operator):  # noqa: F811
    """Real findings of each kind, as the API answers them, validate with every object closed."""
    fixtures = SimpleNamespace(**{name: request.getfixturevalue(name) for name in (
        "coupon", "template", "ctx", "send", "clock", "broken_on_purpose", "tmp_path")})
    if scenario is closed_order_still_locked:
        scenario(fixtures.template, fixtures.ctx)
    else:
        scenario(fixtures)
        reconcile()

    answers = operator.get("/api/v1/reconciliation", {"page_size": 200}).json()["results"]

    assert FINDINGS[scenario] <= {row["kind"] for row in answers}
    for answer in answers:
        assert closed_allows(schema, "FindingEvidence", answer["evidence"]), answer
        assert answer_allows(schema, "FindingOutput", answer)
    assert not closed_allows(schema, "FindingEvidence", {**answers[0]["evidence"],
                                                         "coupon_version": "3"})
    assert not closed_allows(schema, "FindingEvidence", {**answers[0]["evidence"],
                                                         "undeclared": 1})

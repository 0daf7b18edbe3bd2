"""A presale whose deposit cannot lock its coupon never goes silent: a case names the order, the
coupon and why; the final payment joins that case; reconciliation finds the order; and the case
recommends what the presale rule does (a substitute, the discount as a compensation, a person)."""

from decimal import Decimal

import pytest

from coupons.models import (
    ConflictCase,
    FindingKind,
    OrderCoupon,
    PresaleSettlement,
    Redemption,
)
from coupons.services import CommandContext
from coupons.services.cases import case_resolve
from refunds.models import Compensation
from tests.conftest import lock
from tests.coupons.events.test_presale import deposit, final_payment, issue, presale_template
from tests.operations.reconciliation.conftest import open_findings, reconcile

pytestmark = pytest.mark.django_db

OPERATOR = CommandContext(actor="operator-1")


@pytest.fixture
def taken_coupon(clock, ctx):
    """A presale coupon another order already locked: the deposit's lock will be refused."""
    coupon = issue(presale_template("presale-taken"))
    lock(coupon, ctx, order_id="OTHER")
    return coupon


def test_a_refused_deposit_opens_a_case_the_final_payment_joins(taken_coupon, send):
    outcome = deposit(send, taken_coupon)["outcome"]

    assert (outcome["action"], outcome["error_code"], outcome["recommendation"]) == (
        "CASE_OPENED", "INVALID_STATE",
        "ORDER_DISCOUNT_REFUND")
    case = ConflictCase.objects.get(pk=outcome["case_id"])
    assert (case.coupon_id, case.order_id, case.fact_type, case.payment_id) == (
        taken_coupon.pk, "PS-1", "DepositPaid", "")
    assert case.evidence["refused_with"] == outcome["error_code"] != ""
    assert case.evidence["order_discount"] == "50.00"
    assert "order OTHER holds or used it" in case.summary

    paid = final_payment(send)["outcome"]

    assert (paid["action"], paid["case_id"]) == ("CASE_OPENED", case.pk)
    case.refresh_from_db()
    assert (case.payment_id, case.evidence["final_payment_id"]) == ("FP-1", "FP-1")
    assert ConflictCase.objects.count() == 1


def test_reconciliation_finds_the_order_until_a_person_decides(taken_coupon, send):
    case_id = deposit(send, taken_coupon)["outcome"]["case_id"]
    final_payment(send)

    reconcile()

    [finding] = [f for f in open_findings() if f.kind == FindingKind.DEPOSIT_NOT_BOUND]
    assert (finding.coupon_id, finding.subject, finding.severity) == (
        taken_coupon.pk, "PS-1", "P1")
    assert (finding.evidence["paid"], finding.evidence["case_id"]) == (True, case_id)

    case_resolve(case_id=case_id, action="APPLY", note="", ctx=OPERATOR)
    reconcile()

    assert not [f for f in open_findings() if f.kind == FindingKind.DEPOSIT_NOT_BOUND]
    [owed] = Compensation.objects.filter(order_id="PS-1")
    assert owed.amount == Decimal("50.00")


def test_the_case_recommends_a_substitute_and_applying_it_binds_the_order(taken_coupon, send):
    spare = issue(presale_template("presale-spare", face_value="60.00"))
    case_id = deposit(send, taken_coupon)["outcome"]["case_id"]
    case = ConflictCase.objects.get(pk=case_id)
    assert (case.recommendation, case.evidence["substitute_coupon_id"]) == ("SUBSTITUTE", spare.pk)

    case_resolve(case_id=case_id, action="APPLY", note="", ctx=OPERATOR)

    binding = OrderCoupon.objects.get(order_id="PS-1")
    # The substitute stands in for the discount promised, never more.
    assert (binding.coupon_id, binding.discount_amount) == (spare.pk, Decimal("50.00"))
    paid = final_payment(send)["outcome"]
    assert (paid["action"], paid["coupon_id"]) == ("REDEEMED", spare.pk)
    assert Redemption.objects.get(order_id="PS-1").coupon_id == spare.pk


def test_a_substitute_applied_after_the_final_payment_redeems_at_once(taken_coupon, send):
    spare = issue(presale_template("presale-spare", face_value="60.00"))
    case_id = deposit(send, taken_coupon)["outcome"]["case_id"]
    final_payment(send)

    case_resolve(case_id=case_id, action="APPLY", note="", ctx=OPERATOR)

    assert Redemption.objects.get(order_id="PS-1", payment_id="FP-1").coupon_id == spare.pk
    settled = PresaleSettlement.objects.get(order_id="PS-1")
    assert (settled.result, settled.substitute_id) == ("SUBSTITUTED", spare.pk)


def test_a_final_payment_after_the_case_was_decided_leaves_the_decision(taken_coupon, send):
    case_id = deposit(send, taken_coupon)["outcome"]["case_id"]
    case_resolve(case_id=case_id, action="DISMISS", note="told the buyer", ctx=OPERATOR)

    paid = final_payment(send)["outcome"]

    assert (paid["action"], paid["case_id"]) == ("CASE_ALREADY_CLOSED", case_id)
    assert ConflictCase.objects.get(pk=case_id).payment_id == ""

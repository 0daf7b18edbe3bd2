"""The actions a return policy may take besides RETURN and KEEP_USED, and approval rules."""

from decimal import Decimal

import pytest

from coupons.evidence.tips import journal_tip
from coupons.models import CouponOperation, UserCoupon
from coupons.services import template_create
from coupons.write.context import CommandContext
from refunds.models import Compensation, RefundCoupon
from refunds.services import refund_approve
from refunds.services.policies import policy_create, policy_publish
from tests.refunds.conftest import issue, redeem, refund

pytestmark = pytest.mark.django_db


def coupon_under(rules, ctx):
    policy = policy_create(code="custom", name="Custom", actor="user:policy", rules=rules)
    policy_publish(policy.versions.get(number=1), "user:policy")
    template = template_create(
        code="custom-30", name="30 off", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
        valid_days=30, return_policy=policy,
    )
    coupon = issue(template, ctx)
    redeem(coupon, ctx)
    return coupon


def only(label, action, **rule):
    return [{"label": label, "when": {}, "action": action, **rule}]


def row(coupon):
    coupon = UserCoupon.objects.get(pk=coupon.pk)
    return coupon.status, coupon.state_version


def test_void_voids_the_coupon_and_the_ledger_names_the_refund(ctx, clock):
    coupon = coupon_under(only("Refunds void the coupon", "VOID"), ctx)

    [decision] = refund(ctx, "r-1").decisions

    assert (decision.action, decision.status) == ("VOID", "EXECUTED")
    assert decision.policy_version.policy.code == "custom"
    assert row(coupon) == ("VOID", 4)
    voided = CouponOperation.objects.get(coupon=coupon, op_type="VOID")
    assert (decision.operation_id, voided.refund_id) == (voided.pk, "r-1")


def test_compensate_with_a_template_issues_a_new_coupon_linked_to_the_decision(
    ctx, clock, template
):
    coupon = coupon_under(only("Give a fresh coupon", "COMPENSATE",
                               compensation={"template_id": template.pk}), ctx)

    [decision] = refund(ctx, "r-1").decisions

    assert (decision.action, decision.status) == ("COMPENSATE", "EXECUTED")
    fresh = decision.compensation_coupon
    assert (fresh.template_id, fresh.user_id, fresh.status) == (template.pk, "u1", "AVAILABLE")
    assert row(coupon) == ("USED", 3)


def test_compensate_with_an_amount_records_a_refund_credit(ctx, clock):
    coupon = coupon_under(only("Credit instead", "COMPENSATE",
                               compensation={"amount": "12.00"}), ctx)

    [decision] = refund(ctx, "r-1").decisions

    credit = decision.compensation_record
    assert (credit.kind, credit.amount, credit.order_id) == (
        Compensation.Kind.REFUND_CREDIT, Decimal("12.00"), "order-A")
    assert row(coupon) == ("USED", 3)


def test_a_rule_that_requires_approval_returns_only_once_approved(ctx, clock):
    coupon = coupon_under(only("Return after a look", "RETURN", requires_approval=True), ctx)

    [decision] = refund(ctx, "r-1").decisions
    assert (decision.status, row(coupon)) == ("PENDING_APPROVAL", ("USED", 3))

    approved = refund_approve(decision_id=decision.pk, note="fine",
                              seen_entry=journal_tip(RefundCoupon, decision.pk),
                              ctx=CommandContext(actor="user:operator"))

    assert (approved.status, approved.executed_action, approved.reviewed_by) == (
        "EXECUTED", "RETURN", "user:operator")
    assert row(coupon) == ("AVAILABLE", 4)
    assert RefundCoupon.objects.get().operation.op_type == "RETURN"

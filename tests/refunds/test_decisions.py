"""Refund decisions under the default policy: the money decision and the coupon decision."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction

from coupons.errors import CouponError
from coupons.evidence.replay import coupon_check
from coupons.models import CouponOperation, CouponStatus, Redemption, UserCoupon
from coupons.services import coupon_redeem, template_create
from refunds.models import RefundCoupon, ReturnPolicy
from refunds.services import coupon_return
from refunds.services.policies import policy_draft_create, policy_draft_update, policy_publish
from tests.command_checks import events, ledger
from tests.conftest import lock
from tests.refunds.conftest import issue, redeem, refund

pytestmark = pytest.mark.django_db

Status = RefundCoupon.Status


def status_of(coupon):
    row = UserCoupon.objects.get(pk=coupon.pk)
    return row.status, row.state_version


def test_full_refund_of_an_amount_off_coupon_returns_it(coupon, ctx, clock):
    redemption = redeem(coupon, ctx)
    clock.advance(days=2)

    receipt = refund(ctx, "r-1", amount="270.00")

    [decision] = receipt.decisions
    assert (decision.action, decision.status) == ("RETURN", Status.EXECUTED)
    assert decision.policy_version.policy.code == "default"
    assert decision.policy_version.number == 1
    assert decision.rule_label == "Full refund within 30 days of redemption returns the coupon"
    # Money: the whole discount of the order's snapshot comes back with a full refund.
    assert (decision.order_discount, decision.paid_amount, decision.coupon_share) == (
        Decimal("30.00"), Decimal("270.00"), Decimal("30.00"))
    assert decision.facts["refund_type"] == "FULL"
    assert decision.facts["days_since_redemption"] == 2
    assert status_of(coupon) == ("AVAILABLE", 4)
    assert ledger(coupon)[-1] == ("RETURN", "USED", "AVAILABLE", 3, 4)
    assert events(coupon)[-1] == "CouponReturned"
    returned = CouponOperation.objects.get(coupon=coupon, op_type="RETURN")
    assert returned.original_operation.op_type == "REDEEM"
    assert returned.original_operation.lock_id == redemption.lock_id
    assert (returned.refund_id, decision.operation_id) == ("r-1", returned.pk)
    # The redemption is kept, no longer successful: the coupon can be used again.
    redemption.refresh_from_db()
    assert not redemption.succeeded
    redeem(coupon, ctx, order_id="order-B")
    assert status_of(coupon) == ("USED", 6)
    assert Redemption.objects.filter(coupon=coupon).count() == 2


def test_full_refund_after_valid_until_returns_the_coupon_expired(clock, ctx):
    short = template_create(
        code="weekend", name="Weekend 30 off", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
        valid_from=clock.now(), valid_until=clock.now() + timedelta(days=2),
    )
    coupon = issue(short, ctx)
    redeem(coupon, ctx)
    clock.advance(days=3)

    [decision] = refund(ctx, "r-1").decisions

    assert decision.facts["coupon_expired"] is True
    assert (decision.action, decision.status) == ("RETURN", Status.EXECUTED)
    assert status_of(coupon) == ("EXPIRED", 4)
    assert ledger(coupon)[-1] == ("RETURN", "USED", "EXPIRED", 3, 4)


def test_partial_refund_keeps_the_coupon_used_and_pro_rates_its_discount(coupon, ctx):
    redeem(coupon, ctx)  # 300.00 order, 30.00 off, 270.00 paid

    [decision] = refund(ctx, "r-1", amount="90.00", refund_type="PARTIAL").decisions

    assert (decision.action, decision.status) == ("KEEP_USED", Status.DECIDED)
    assert decision.rule_label == "Partial refunds keep the coupon used"
    assert decision.operation is None
    # A third of what was paid is refunded: a third of the order's 30.00 discount.
    assert decision.coupon_share == Decimal("10.00")
    assert decision.facts["refunded_share"] == "0.3333"
    assert status_of(coupon) == ("USED", 3)


def test_two_partial_refunds_adding_up_to_the_paid_amount_count_as_full(coupon, ctx):
    redeem(coupon, ctx)

    [first] = refund(ctx, "r-1", amount="100.00", refund_type="PARTIAL").decisions
    [second] = refund(ctx, "r-2", amount="170.00", refund_type="PARTIAL").decisions

    assert (first.action, first.facts["refund_type"]) == ("KEEP_USED", "PARTIAL")
    assert (second.action, second.facts["refund_type"]) == ("RETURN", "FULL")
    assert second.refunded_total == Decimal("270.00")
    # Rounded shares still add up to exactly the discount.
    assert (first.coupon_share, second.coupon_share) == (Decimal("11.11"), Decimal("18.89"))
    assert status_of(coupon) == ("AVAILABLE", 4)


def test_full_refund_of_a_percent_coupon_returns_its_capped_discount(percent_template, ctx):
    coupon = issue(percent_template, ctx)
    redeem(coupon, ctx, amount="420.00")  # 15% of 420 is 63, capped at 50

    [decision] = refund(ctx, "r-1", amount="370.00").decisions

    assert (decision.order_discount, decision.coupon_share) == (Decimal("50.00"),
                                                                 Decimal("50.00"))
    assert decision.facts["template_kind"] == "PERCENT_OFF"
    assert decision.action == "RETURN"
    assert status_of(coupon) == ("AVAILABLE", 4)


@pytest.mark.parametrize("days_later", [1, 31])
def test_an_exchange_coupon_stays_used_before_and_after_expiry(
    exchange_template, ctx, clock, days_later
):
    coupon = issue(exchange_template, ctx)
    redeem(coupon, ctx, amount="28.00")  # the latte: paid nothing
    clock.advance(days=days_later)

    [decision] = refund(ctx, "r-1", amount="0.01").decisions

    assert decision.facts["coupon_expired"] is (days_later > 30)
    assert (decision.action, decision.status) == ("KEEP_USED", Status.DECIDED)
    assert decision.rule_label == "Exchange coupons are one-time: they stay used"
    assert decision.paid_amount == Decimal("0.00")
    assert status_of(coupon) == ("USED", 3)


def test_full_refund_more_than_30_days_after_redemption_keeps_the_coupon(coupon, ctx, clock):
    redeem(coupon, ctx)
    clock.advance(days=31)

    [decision] = refund(ctx, "r-1").decisions

    assert (decision.action, decision.rule_label) == ("KEEP_USED",
                                                      "Otherwise the coupon stays used")
    assert decision.facts["coupon_expired"] is True
    assert status_of(coupon) == ("USED", 3)


def test_a_refund_before_the_redemption_is_decided_when_it_arrives(coupon, ctx, clock):
    _, proof = lock(coupon, ctx)
    [waiting] = refund(ctx, "r-1").decisions
    assert (waiting.status, waiting.action, waiting.policy_version) == (
        Status.AWAITING_REDEMPTION, "", None)
    assert status_of(coupon) == ("LOCKED", 2)

    clock.advance(minutes=5)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="pay-order-A", ctx=ctx)

    waiting.refresh_from_db()
    assert (waiting.status, waiting.action) == (Status.EXECUTED, "RETURN")
    assert waiting.redemption.order_id == "order-A"
    assert [op[0] for op in ledger(coupon)] == ["ISSUE", "LOCK", "REDEEM", "RETURN"]
    assert status_of(coupon) == ("AVAILABLE", 4)


def test_a_refund_of_an_order_without_a_coupon_decides_nothing(coupon, ctx):
    receipt = refund(ctx, "r-1", order_id="order-without-coupon")

    assert receipt.decisions == []
    assert RefundCoupon.objects.count() == 0


def test_the_same_refund_twice_decides_once(coupon, ctx):
    redeem(coupon, ctx)

    first = refund(ctx, "r-1").decisions
    again = refund(ctx, "r-1").decisions

    assert [d.pk for d in again] == [d.pk for d in first]
    assert RefundCoupon.objects.count() == 1
    assert [op[0] for op in ledger(coupon)].count("RETURN") == 1


def test_a_risk_flagged_refund_waits_for_an_operator(coupon, ctx):
    redeem(coupon, ctx)

    [decision] = refund(ctx, "r-1", risk_flag=True).decisions

    assert (decision.action, decision.status, decision.requires_approval) == (
        "MANUAL_REVIEW", Status.PENDING_APPROVAL, True)
    assert status_of(coupon) == ("USED", 3)


def test_a_decision_keeps_its_policy_version_after_a_newer_one_is_published(coupon, ctx, clock):
    redeem(coupon, ctx)
    [before] = refund(ctx, "r-1", amount="90.00", refund_type="PARTIAL").decisions
    default = ReturnPolicy.objects.get(code="default")
    draft = policy_draft_create(default, "user:policy")
    rules = [{"label": "Every refund returns the coupon", "when": {}, "action": "RETURN"}]
    policy_publish(policy_draft_update(draft, rules, "user:policy"), "user:policy")
    clock.advance(minutes=1)

    [after] = refund(ctx, "r-2", amount="10.00", refund_type="PARTIAL").decisions

    before.refresh_from_db()
    assert (before.policy_version.number, before.action, before.status) == (
        1, "KEEP_USED", Status.DECIDED)
    assert (after.policy_version.number, after.action) == (2, "RETURN")


def test_invariant_6_fires_on_a_return_without_a_refund_decision(coupon, ctx):
    redemption = redeem(coupon, ctx)
    with transaction.atomic():
        coupon_return(coupon_id=coupon.pk, redemption=redemption, refund_id="r-ghost",
                      expected_version=3, ctx=ctx)
        report = coupon_check(UserCoupon.objects.get(pk=coupon.pk))
        transaction.set_rollback(True)  # leave no broken coupon for the ledger fixture

    assert report.violations == {6: ["RETURN v3→v4 has no refund decision with a policy version"]}


def test_a_return_can_only_undo_the_current_redemption(coupon, ctx):
    old = redeem(coupon, ctx)
    refund(ctx, "r-1")
    redeem(coupon, ctx, order_id="order-B")

    with pytest.raises(CouponError) as refused:
        coupon_return(coupon_id=coupon.pk, redemption=old, refund_id="r-again",
                      expected_version=6, ctx=ctx)

    assert refused.value.code == "INVALID_STATE"
    assert status_of(coupon) == (CouponStatus.USED, 6)

"""A refund decision's reason and rule, and the RETURN's ledger reason, are kept in English and
read in the reader's language: the reason by its code, a shipped rule label as its own code."""

import pytest
from django.utils import translation

from coupons.ledger_reasons import reason_words
from coupons.models import CouponOperation
from coupons.services import coupon_release
from coupons.services.cases import case_open, case_resolve
from refunds.decision_reasons import decision_reason_words
from refunds.models import Compensation
from refunds.rule_labels import label_words
from tests.conftest import lock
from tests.refunds.conftest import redeem, refund
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("zh")]

RISK_RULE = "Risk-flagged refunds are reviewed by an operator"
RETURN_RULE = "Full refund within 30 days of redemption returns the coupon"


def test_a_decision_for_an_operator_keeps_english_and_reads_in_chinese(coupon, ctx):
    redeem(coupon, ctx)
    [decision] = refund(ctx, "refund-A", risk_flag=True).decisions

    assert (decision.reason, decision.reason_code) == ("An operator decides.",
                                                       "operator_decides")
    assert decision.rule_label == RISK_RULE
    assert decision_reason_words(decision) == "由运营决定。"
    assert label_words(decision.rule_label) == "有风控标记的退款由运营审批"


def test_a_returns_ledger_reason_names_the_rule_in_the_readers_words(coupon, ctx):
    redeem(coupon, ctx)
    refund(ctx, "refund-A")

    returned = CouponOperation.objects.get(coupon=coupon, op_type="RETURN")
    assert returned.reason == f"refund refund-A of order order-A: {RETURN_RULE}"
    assert returned.reason_code == "refund_of_order"
    assert reason_words(returned) == "订单 order-A 的退款 refund-A：核销后 30 天内全额退款：退券"
    with translation.override("en"):
        assert reason_words(returned) == returned.reason


def test_a_label_an_admin_wrote_and_an_old_reason_read_as_written(coupon, ctx):
    lock(coupon, ctx, order_id="order-A")
    [decision] = refund(ctx, "refund-A").decisions  # before its redemption: it waits
    assert decision.reason_code == "awaiting_redemption"
    decision.reason_code = ""

    assert decision_reason_words(decision) == decision.reason
    assert label_words("Refunds over 100 go to finance") == "Refunds over 100 go to finance"



def test_a_cases_compensation_keeps_english_and_reads_the_summary_in_chinese(coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
    lock(coupon, ctx, order_id="order-B")
    coupon.refresh_from_db()
    case = case_open(coupon=coupon, order_id="order-A", fact_type="PaymentSucceeded",
                     evidence={})
    case_resolve(case_id=case.pk, action="APPLY", note="退还优惠", ctx=ctx)

    owed = Compensation.objects.get()
    assert owed.reason == (f"conflict case {case.pk}: Order order-B now holds the coupon: "
                           "refund this order's discount instead.")
    assert owed.reason_code == "conflict_case"
    assert reason_words(owed) == (f"冲突工单 {case.pk}：订单 order-B 现在占用着该券："
                                  "请改为退还本订单的优惠金额。")
    with translation.override("en"):
        assert reason_words(owed) == owed.reason

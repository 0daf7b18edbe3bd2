"""GET /api/v1/coupons/{id}/check answers "do I get my coupon back?" from the latest refund
decision, as the console's reply does, and explains a presale order's final payment."""

from datetime import timedelta

import pytest

from coupons.write.payloads import iso
from tests.coupons.events.test_presale import (
    PAY_TIMES,
    VALID_UNTIL,
    deposit,
    final_payment,
    issue,
    presale_template,
)
from tests.refunds.conftest import redeem, refund

pytestmark = pytest.mark.django_db

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def diagnosis(api, coupon, **headers) -> dict:
    response = api.get(f"/api/v1/coupons/{coupon.pk}/check", **headers)
    assert response.status_code == 200, response.json()
    return response.json()["diagnosis"]


def test_a_coupon_no_refund_names_has_no_refund_answer(api, coupon):
    answer = diagnosis(api, coupon)

    assert (answer["refund"], answer["presale"]) == (None, None)


def test_a_full_refund_says_the_coupon_came_back_and_which_policy_decided(
    api, clock, coupon, ctx,
):
    redeem(coupon, ctx)
    clock.advance(days=2)
    [decision] = refund(ctx, "r-1").decisions

    answer = diagnosis(api, coupon)["refund"]

    assert answer == {
        "decision_id": decision.pk, "order_id": "order-A", "outcome": "RETURNED",
        "coupon_comes_back": True,
        "answer": (f"After the refund of order order-A the coupon was given back at "
                   f"{iso(clock.now())} (decision #{decision.pk}): return policy default, "
                   f"version 1, decided it."),
    }


def test_a_refund_in_review_does_not_say_yet(api, coupon, ctx):
    redeem(coupon, ctx)
    [decision] = refund(ctx, "r-1", risk_flag=True).decisions

    answer = diagnosis(api, coupon)

    assert answer["refund"]["outcome"] == "IN_REVIEW"
    assert answer["refund"]["coupon_comes_back"] is None
    assert f"#{decision.pk}" in answer["refund"]["answer"]
    assert "not decided yet" in answer["refund"]["answer"]
    assert len(answer["pending"]) == 1  # and it waits for a person


def test_a_partial_refund_keeps_it_used(api, coupon, ctx):
    redeem(coupon, ctx)
    refund(ctx, "r-1", amount="100.00", refund_type="PARTIAL")

    answer = diagnosis(api, coupon)["refund"]

    assert (answer["outcome"], answer["coupon_comes_back"]) == ("STAYS_USED", False)
    assert "stays used" in answer["answer"]


def test_the_refund_answer_in_chinese(api, clock, coupon, ctx):
    redeem(coupon, ctx)
    [decision] = refund(ctx, "r-1").decisions

    answer = diagnosis(api, coupon, **CHINESE)["refund"]["answer"]

    assert answer == (f"订单 order-A 退款后，优惠券已于 {iso(clock.now())} 退还（决策 "
                      f"#{decision.pk}）：依据退券规则 default 第 1 版决定。")


def presale_paid_after_validity(clock, send, strategy="STRICT", **charged):
    coupon = issue(presale_template(f"presale-{strategy.lower()}", strategy))
    deposit(send, coupon)
    clock.set(PAY_TIMES["after"])
    final_payment(send, **charged)
    return coupon


def test_strict_presale_paid_after_validity_explains_the_full_price(api, clock, send):
    coupon = presale_paid_after_validity(clock, send, discount_applied="0.00",
                                         amount_charged="1000.00")

    answer = diagnosis(api, coupon)["presale"]

    assert answer == {
        "order_id": "PS-1", "result": "PAID_IN_FULL", "strategy": "STRICT",
        "discount_amount": "0.00", "amount_charged": "1000.00",
        "answer": (f"The final payment of presale order PS-1 came at {iso(clock.now())}, after "
                   f"the coupon's validity ended at {iso(VALID_UNTIL)}, so under STRICT the "
                   f"coupon gave no discount and the order paid full price. The order service "
                   f"says it charged 1000.00."),
    }


def test_strict_presale_explained_in_chinese(api, clock, send):
    coupon = presale_paid_after_validity(clock, send)

    answer = diagnosis(api, coupon, **CHINESE)["presale"]

    assert answer["amount_charged"] is None
    assert answer["answer"] == (
        f"预售订单 PS-1 的尾款于 {iso(clock.now())} 支付，晚于优惠券的有效期截止时间 "
        f"{iso(VALID_UNTIL)}，因此按 STRICT 策略优惠券未抵扣，订单按全价支付。")


def test_presale_paid_in_time_says_the_discount_applied(api, clock, send):
    coupon = issue(presale_template("presale"))
    deposit(send, coupon)
    clock.set(VALID_UNTIL - timedelta(hours=1))
    final_payment(send)

    answer = diagnosis(api, coupon)["presale"]

    assert (answer["result"], answer["discount_amount"]) == ("REDEEMED", "50.00")
    assert "got its discount of 50.00" in answer["answer"]


def test_substitute_presale_names_the_coupon_that_stood_in(api, clock, send):
    template = presale_template("presale-sub", "SUBSTITUTE")
    coupon = issue(template)
    stand_in = issue(presale_template("later", valid_until=VALID_UNTIL + timedelta(days=30)))
    deposit(send, coupon)
    clock.set(PAY_TIMES["after"])
    final_payment(send)

    answer = diagnosis(api, coupon)["presale"]

    assert answer["result"] == "SUBSTITUTED"
    assert f"coupon #{stand_in.pk} gave the order its discount of 50.00" in answer["answer"]

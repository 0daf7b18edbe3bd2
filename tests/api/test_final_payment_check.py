"""GET /orders/{order_id}/final-payment-check: before charging a presale's final payment, the
order service asks whether the coupon still applies and for how much; the four outcomes, their
sentences in English and Chinese, and the discount under each expiry strategy."""

from datetime import timedelta

import pytest

from tests.conftest import lock
from tests.coupons.events.test_presale import (
    VALID_UNTIL,
    deposit,
    final_payment,
    issue,
    presale_template,
)

pytestmark = pytest.mark.django_db

AFTER_EXPIRY = VALID_UNTIL + timedelta(days=1)
CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def check(api, order_id="PS-1", **headers):
    answer = api.get(f"/api/v1/orders/{order_id}/final-payment-check", **headers)
    assert answer.status_code == 200, answer.json()
    return answer.json()


def test_a_locked_valid_coupon_is_ok_with_its_discount(api, clock, send):
    coupon = issue(presale_template("presale"))
    deposit(send, coupon)

    answer = check(api)

    assert (answer["outcome"], answer["discount_amount"], answer["discount_by"]) == (
        "OK", "50.00", "COUPON")
    assert answer["coupon_id"] == coupon.pk
    assert answer["message"] == "The coupon applies: the final payment gets a discount of 50.00."


def test_lock_honors_stays_ok_after_the_coupon_expired(api, clock, send):
    deposit(send, issue(presale_template("presale")))
    clock.set(AFTER_EXPIRY)

    assert (check(api)["outcome"], check(api)["discount_amount"]) == ("OK", "50.00")


def test_strict_after_expiry_is_expired_and_charged_in_full(api, clock, send):
    deposit(send, issue(presale_template("presale-strict", "STRICT")))
    clock.set(AFTER_EXPIRY)

    answer = check(api)

    assert (answer["outcome"], answer["discount_amount"], answer["discount_by"]) == (
        "EXPIRED", "0.00", "NONE")
    assert answer["message"] == ("The coupon expired before the final payment: the final "
                                 "payment is charged in full.")
    assert check(api, **CHINESE)["message"] == "优惠券在付尾款前已失效：尾款按原价全额支付。"


def test_substitute_after_expiry_names_the_substitute_or_the_compensation(api, clock, send):
    coupon = issue(presale_template("presale-sub", "SUBSTITUTE"))
    deposit(send, coupon)
    clock.set(AFTER_EXPIRY)
    assert (check(api)["outcome"], check(api)["discount_by"]) == ("EXPIRED", "COMPENSATION")

    spare = issue(presale_template("spare", valid_until=AFTER_EXPIRY + timedelta(days=30)))
    answer = check(api)

    assert (answer["outcome"], answer["discount_amount"], answer["discount_by"],
            answer["substitute_coupon_id"]) == ("EXPIRED", "50.00", "SUBSTITUTE", spare.pk)


def test_a_deposit_whose_coupon_another_order_holds_is_locked_by_another_order(
        api, clock, send, ctx):
    coupon = issue(presale_template("presale"))
    lock(coupon, ctx, order_id="OTHER")
    deposit(send, coupon)

    answer = check(api)

    assert (answer["outcome"], answer["holder_order_id"], answer["discount_amount"]) == (
        "LOCKED_BY_ANOTHER_ORDER", "OTHER", "0.00")
    assert check(api, **CHINESE)["message"] == (
        "该订单所选的优惠券已被其他订单占用：尾款按原价全额支付。")


def test_an_order_with_no_coupon_is_not_locked(api, clock):
    answer = check(api, order_id="no-such-order")

    assert (answer["outcome"], answer["coupon_id"], answer["discount_amount"]) == (
        "NOT_LOCKED", None, "0.00")
    assert check(api, order_id="no-such-order", **CHINESE)["message"] == (
        "该订单没有锁定优惠券：尾款按原价全额支付。")


def test_after_the_final_payment_redeemed_it_the_answer_is_still_ok(api, clock, send):
    deposit(send, issue(presale_template("presale")))
    final_payment(send)

    assert check(api)["outcome"] == "OK"


def test_an_order_id_with_surrounding_whitespace_is_a_400(api):
    answer = api.get("/api/v1/orders/%20PS-1/final-payment-check")

    assert (answer.status_code, answer.json()["error"]["code"]) == (400, "VALIDATION_ERROR")

"""The domain's words reach a zh-hans reader in Chinese: API error messages (Accept-Language),
the check panel's diagnosis and invariants, the policy rules' problems and the timeline's
titles. Codes, states and ids stay English; the rejection log stores the English message
whatever language the caller asked for."""

import uuid
from datetime import timedelta

import pytest
from django.utils import translation

from coupons.errors import ValidationFailed
from coupons.history import coupon_timeline
from coupons.models import CommandRejection
from coupons.write.payloads import iso
from refunds.policy_engine import clean_rules
from tests.conftest import START
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("zh")]

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
ENGLISH = {"HTTP_ACCEPT_LANGUAGE": "en"}
LOCK = {"order_id": "A", "user_id": "u1", "order_amount": "300.00"}


def post(api, path, body, **headers):
    return api.post(f"/api/v1/{path}", body, format="json",
                    HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()), **headers)


def test_not_found_message_is_chinese_and_its_code_stays_english(api, clock):
    response = api.get("/api/v1/coupons/999999", **CHINESE)

    assert response.status_code == 404
    assert response.json()["error"] == {"code": "NOT_FOUND", "message": "优惠券不存在。",
                                        "details": {"coupon_id": 999999}}
    english = api.get("/api/v1/coupons/999999", **ENGLISH)
    assert english.json()["error"]["message"] == "No such coupon."


def test_refused_command_answers_in_chinese_and_logs_english(api, coupon):
    assert post(api, f"coupons/{coupon.pk}/lock", LOCK).status_code == 200

    response = post(api, f"coupons/{coupon.pk}/lock", {**LOCK, "order_id": "B"}, **CHINESE)

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "INVALID_STATE"
    assert error["message"] == "状态 LOCKED 下不允许执行 LOCK。"
    assert error["details"]["current_state"] == "LOCKED"
    refusal = CommandRejection.objects.get(error_code="INVALID_STATE")
    assert refusal.message == "LOCK is not allowed from LOCKED."


def test_below_threshold_is_explained_in_chinese(api, coupon):
    response = post(api, f"coupons/{coupon.pk}/lock", {**LOCK, "order_amount": "199.99"},
                    **CHINESE)

    assert response.status_code == 422
    assert response.json()["error"] == {
        "code": "THRESHOLD_NOT_MET", "message": "订单金额未达到优惠券的使用门槛。",
        "details": {"min_order_amount": "200.00", "order_amount": "199.99"},
    }


def test_check_panel_answers_diagnosis_and_invariants_in_chinese(api, coupon):
    body = api.get(f"/api/v1/coupons/{coupon.pk}/check", **CHINESE).json()

    until = iso(START + timedelta(days=30))
    assert body["diagnosis"]["verdict"] == f"当前可用，有效期至 {until}。"
    assert "（200.00）" in body["diagnosis"]["support_action"]
    assert body["invariants"][3]["rule"] == "每次状态变更，状态版本恰好加一"
    english = api.get(f"/api/v1/coupons/{coupon.pk}/check", **ENGLISH).json()
    assert english["diagnosis"]["verdict"] == f"Usable now until {until}."


def test_locked_coupon_diagnosis_names_the_order_in_chinese(api, coupon):
    post(api, f"coupons/{coupon.pk}/lock", LOCK)

    diagnosis = api.get(f"/api/v1/coupons/{coupon.pk}/check", **CHINESE).json()["diagnosis"]

    assert diagnosis["verdict"].startswith("已被订单 A 锁定，租约到期时间为 ")
    assert "如果订单 A 关闭或支付失败" in diagnosis["support_action"]


def test_policy_rule_problems_are_chinese():
    rules = [{"label": "half", "when": {"refunded_share_min": 2}, "action": "RETURN"},
             {"label": "", "action": "FLY"}]

    with pytest.raises(ValidationFailed) as refused:
        clean_rules(rules)

    assert str(refused.value.message) == "退券规则无效。"
    problems = refused.value.details["rules"]
    assert problems["0"]["when"]["refunded_share_min"] == ["必须在 0 到 1 之间"]
    assert problems["1"]["label"] == ["必填，1 到 200 个字符"]
    assert problems["1"]["action"][0].startswith("必须是以下之一：RETURN, ")


def test_timeline_titles_and_a_stored_refusal_read_in_chinese(api, coupon):
    post(api, f"coupons/{coupon.pk}/lock", {**LOCK, "order_amount": "199.99"}, **ENGLISH)

    # The request left its own language active (the locale middleware): read as zh-hans.
    with translation.override("zh-hans"):
        entries = coupon_timeline(coupon=coupon, can_see_details=True)

    refusal = next(e for e in entries if e["kind"] == "refusal")
    assert refusal["title"] == "LOCK 被拒绝：THRESHOLD_NOT_MET"
    # Stored in English; a message that is a catalogue entry as it stands reads in Chinese.
    stored = CommandRejection.objects.get()
    assert stored.message == "The order amount is below the coupon's minimum."
    assert refusal["details"]["message"] == "订单金额未达到优惠券的使用门槛。"

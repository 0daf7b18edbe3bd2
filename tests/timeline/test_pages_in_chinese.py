"""The console's pages read in Simplified Chinese: every text the templates write comes from the
zh_Hans catalogue, while codes, ids and states (TOKEN_MISMATCH, USED, order ids) stay English."""

import re

import pytest
from django.template.loader import render_to_string
from django.test import override_settings
from django.urls import reverse
from django.utils import translation

from coupons.evidence.tips import journal_tip
from refunds.models import RefundCoupon, ReturnPolicy
from refunds.services.policies import policy_draft_create
from tests.timeline.incident import incident_coupon
from tests.timeline.queue_helpers import new_key
from tests.timeline.queue_objects import fresh_coupon, late_payment_case, pending_decision, proposal
from tests.zh_catalogue import compiled_catalogue  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


@pytest.fixture
def zh(compiled_catalogue):  # noqa: F811 (the fixture imported above)
    """Chinese for the test's requests: the Accept-Language header for the locale middleware,
    and the active language for rendering without it."""
    with override_settings(LOCALE_PATHS=[str(compiled_catalogue)]), translation.override("zh-hans"):
        yield


def page(client, url, **params) -> str:
    answer = client.get(url, params, **CHINESE)
    assert answer.status_code == 200, answer.status_code
    return answer.content.decode()


def test_the_coupon_page_answers_support_in_chinese(signed_in, template, clock, zh):
    coupon = incident_coupon(template, clock)

    html = page(signed_in("support"), reverse("console:coupon", args=[coupon.pk]))

    for words in (f"优惠券 {coupon.pk}", "这张券为什么不能用？", "客服应如何处理：",
                  "；所有不变量均成立。", "占用订单", "时间线", "流水",
                  "操作人", "拒绝记录", "没有已验证的检查点：尚无签名有效的检查点覆盖此券。"):
        assert words in html, words
    for english in ("Why can't this coupon be used?", "What support should do", "Ledger replays",
                    "Held by", "No ledger rows", "Link to this entry"):
        assert english not in html, english
    assert re.search(r"✓ 流水重放结果为 已核销 <span class=\"code-badge\"><abbr [^>]*>USED</abbr>"
                     r"</span> v\d+；", html)
    assert "order_demo_B" in html and "TOKEN_MISMATCH" in html  # ids and codes stay as sent


def test_dashboard_counts_read_in_chinese_with_their_plural(signed_in, coupon, zh):
    late_payment_case(coupon)

    html = page(signed_in("operator"), "/")

    for words in ("概览", "各状态优惠券", "未处理的冲突工单", "0 个退款决策等待批准",
                  "0 个补偿提议等待决定", "最近 24 小时每小时的命令与拒绝记录", "需要关注的事项"):
        assert words in html, words
    assert "refund decisions awaiting approval" not in html


def test_search_explains_itself_and_its_results_in_chinese(signed_in, template, zh):
    client = signed_in("support")
    fresh_coupon(template, "u1"), fresh_coupon(template, "u1")

    assert "输入顾客或其他团队提供的任意 ID" in page(client, reverse("console:search"))
    listed = page(client, reverse("console:search"), q="u1")
    assert re.search(r"2 张券，按.+匹配。", listed)
    assert "有效期至" in listed and "最近变更" in listed
    nothing = page(client, reverse("console:search"), q="order-nobody")
    assert "没有与“order-nobody”匹配的优惠券。" in nothing
    assert "请检查 ID 是否有误" in nothing


def test_queues_and_their_confirmations_read_in_chinese(signed_in, template, zh):
    case = late_payment_case(fresh_coupon(template, "u1"))
    decision = pending_decision(fresh_coupon(template, "u2"))
    compensation = proposal(fresh_coupon(template, "u3"))
    client = signed_in("operator")

    cases = page(client, reverse("console:cases"))
    assert "冲突工单" in cases and f'hx-confirm="处理工单 #{case.pk}？"' in cases
    assert ">全部<" in cases and ">未处理<" in cases and "建议处理" in cases
    approvals = page(client, reverse("console:approvals"))
    assert "待审批的退款决策" in approvals and "有风险标记" in approvals
    assert f'hx-confirm="批准退款决策 #{decision.pk}？"' in approvals
    compensations = page(client, reverse("console:compensations"))
    assert "提出补偿" in compensations and f"补偿 #{compensation.pk}" in compensations
    assert f'hx-confirm="驳回补偿 #{compensation.pk}？"' in compensations
    # Without JS the server asks on a page of its own, in the same language.
    asked = client.post(reverse("console:decision_approve", args=[decision.pk]),
                        {"idempotency_key": new_key(), "action": "RETURN",
                         "seen_entry": journal_tip(RefundCoupon, decision.pk)}, **CHINESE)
    assert asked.status_code == 200
    assert "确定" in asked.content.decode() and "取消" in asked.content.decode()
    assert "Cancel" not in asked.content.decode()


def test_policy_pages_read_in_chinese(signed_in, clock, zh):
    default = ReturnPolicy.objects.get(code="default")
    draft = policy_draft_create(default, "user:pat")
    client = signed_in("policy_admin", "pat")
    version = {"policy_id": default.pk, "number": draft.number}

    assert "退券规则" in page(client, reverse("console:policies"))
    shown = page(client, reverse("console:policy_version", kwargs=version))
    assert "（按顺序，第一条匹配的规则生效）" in shown and "其他情况（默认规则）：" in shown
    assert "预览影响评估并发布" in shown
    editor = page(client, reverse("console:policy_version_edit", kwargs=version))
    assert "保存草稿" in editor and f"编辑 默认退券规则 的草稿 v{draft.number}" in editor
    assert "规则 1" in editor and "上移" in editor
    impact = page(client, reverse("console:policy_version_impact", kwargs=version))
    assert f"草稿 v{draft.number} 的影响评估" in impact and "发布" in impact
    diff = page(client, reverse("console:policy_diff", kwargs={"policy_id": default.pk}),
                **{"from": 1, "to": draft.number})
    assert "v1 (已发布)" in diff and "未变" in diff


def test_sign_in_refusal_and_lock_out_pages_read_in_chinese(client, signed_in, zh):
    assert "用户名" in page(client, reverse("console:login"))

    refused = signed_in("support").get(reverse("console:policy_new"), **CHINESE)
    assert refused.status_code == 403
    assert "无权操作" in refused.content.decode()
    assert "本次尝试已记录。" in refused.content.decode()

    locked = render_to_string("registration/locked_out.html", {
        "username": "sam", "failure_limit": 5, "cooloff_timedelta": "0:15:00"})
    assert '<html lang="zh-hans">' in locked
    assert "从此地址为 <strong>sam</strong> 输错密码的次数过多（连续 5 次）。" in locked
    assert "自最后一次尝试起 0:15:00（时:分:秒）内无法登录" in locked


def test_reconciliation_page_reads_in_chinese(signed_in, zh):
    html = page(signed_in("operator"), reverse("console:reconciliation"))

    assert "对账" in html and "尚未运行过对账（<code>manage.py reconcile</code>）。" in html
    assert "没有未处理的对账差异" in html


def test_a_missing_coupon_answers_the_console_404_page_in_english_and_chinese(signed_in, zh):
    client = signed_in("support")
    with translation.override("en"):
        english = client.get("/coupons/999999/", HTTP_ACCEPT_LANGUAGE="en")
    chinese = client.get("/coupons/999999/", **CHINESE)

    assert english.status_code == chinese.status_code == 404
    assert "<h1>Not found</h1>" in english.content.decode()
    assert "<code>/coupons/999999/</code>" in english.content.decode()
    assert "<h1>未找到</h1>" in chinese.content.decode()
    assert client.get("/api/v1/nothing-here", **CHINESE).json()["error"]["code"] == "NOT_FOUND"

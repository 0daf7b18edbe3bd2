"""The ready reply under the check panel: Chinese first, then English, from the same facts as
the answer, with a copy button; and the refund question answered from the refund decision."""

import re

import pytest
from django.urls import reverse

from coupons.services import coupon_redeem
from refunds.models import Compensation
from tests.timeline.incident import incident_coupon
from tests.timeline.queue_helpers import press
from tests.timeline.queue_objects import SYSTEM, fresh_coupon, pending_decision
from tests.timeline.test_action_effects import discount_refund_case
from tests.zh_catalogue import compiled_catalogue  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def chinese_catalogue(compiled_catalogue, settings):  # noqa: F811
    settings.LOCALE_PATHS = [str(compiled_catalogue)]


def replies(page: str, kind: str) -> dict:
    """{language: text} of one group of replies, in page order."""
    return dict(re.findall(rf'<p id="reply-{kind}-([\w-]+)" lang="[\w-]+">(.*?)</p>', page, re.S))


def page_of(client, coupon) -> str:
    return client.get(reverse("console:coupon", args=[coupon.pk])).content.decode()


def late_order_coupon(template):
    """Order A paid after order B took the coupon; B then paid: a case for A's discount."""
    coupon, case, proof = discount_refund_case(template)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="pay-order-B", ctx=SYSTEM)
    return coupon, case


def test_the_reply_says_which_order_used_it_and_that_the_other_is_checked(
        chinese_catalogue, signed_in, template):
    coupon, _ = late_order_coupon(template)

    said = replies(page_of(signed_in("support"), coupon), "state")

    assert list(said) == ["zh-hans", "en"]  # Chinese first
    assert "您的优惠券已于" in said["zh-hans"] and "用于订单 order-B" in said["zh-hans"]
    assert "订单 order-A" in said["zh-hans"] and "核查" in said["zh-hans"]
    assert said["en"].startswith("Hello! Your coupon was used for order order-B at ")
    assert "Order order-A was paid after the coupon had moved on" in said["en"]


def test_once_the_case_opens_a_compensation_the_reply_says_the_discount_comes_back(
        chinese_catalogue, signed_in, template):
    coupon, case = late_order_coupon(template)
    operator = signed_in("operator", "olga")
    press(operator, "case_resolve", case_id=case.pk, action="APPLY", note="B used it")
    owed = Compensation.objects.get(coupon=coupon)

    said = replies(page_of(operator, coupon), "state")

    assert "订单 order-A 的优惠金额" in said["zh-hans"] and "审批通过后将退回" in said["zh-hans"]
    assert (f"The discount of order order-A (¥{owed.amount}) will be refunded to you once "
            "it is approved.") in said["en"]


def test_the_refund_question_is_answered_from_the_decision_and_its_policy_version(
        chinese_catalogue, signed_in, template):
    decision = pending_decision(fresh_coupon(template))
    operator = signed_in("operator")

    waiting = replies(page_of(operator, decision.coupon), "refund")
    assert "is being reviewed; we will tell you whether the coupon comes back" in waiting["en"]
    assert "正在审核中" in waiting["zh-hans"]

    press(operator, "decision_approve", decision_id=decision.pk, action="RETURN", note="ok")
    decision.refresh_from_db()

    said = replies(page_of(operator, decision.coupon), "refund")
    version = decision.policy_version
    assert said["en"].startswith(f"Hello! After the refund of order {decision.order_id} your "
                                 "coupon was returned to you at ")
    # The reason as the customer is told it, never the policy's code or version.
    assert "(reason: the refund was reviewed by our team)." in said["en"]
    assert "（原因：退款已由我们的工作人员审核）。" in said["zh-hans"]
    assert "default" not in said["zh-hans"] and f"第 {version.number} 版" not in said["zh-hans"]


def test_each_reply_has_a_copy_button_naming_its_text_and_no_inline_script(
        signed_in, template, clock):
    coupon = incident_coupon(template, clock)

    page = page_of(signed_in("support"), coupon)

    for language in ("zh-hans", "en"):
        button = re.search(rf'<button type="button" data-copy="reply-state-{language}"[^>]*>'
                           r'(.+?)</button>\s*<span class="copy-status" role="status">', page)
        # The language named in the reader's words: no English word on a Chinese page.
        assert button and button[1] == {"zh-hans": "Copy the reply in Chinese",
                                        "en": "Copy the reply in English"}[language]
        assert f'id="reply-state-{language}"' in page
    assert "<script>" not in page and "onclick" not in page

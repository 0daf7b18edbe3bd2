"""The ready replies read as a 客服 writes them: greeting and closing, the customer's own time
(Beijing time, whatever zone the agent's browser is on), full-width punctuation with no space
between Chinese sentences, the reason the customer is given rather than a policy version; and
the refund answer is the check panel's first block, with no advice to go and look for it."""

import re
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from config.env import env_time_zone
from refunds.models import ReturnPolicy
from refunds.services import refund_receive
from refunds.services.policies import policy_draft_create, policy_publish
from tests.timeline.queue_objects import SYSTEM, fresh_coupon, redeemed
from tests.timeline.test_customer_replies import replies
from tests.zh_catalogue import compiled_catalogue  # noqa: F401 (a fixture)
from timeline.time_zones import BROWSER_COOKIE

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def chinese_catalogue(compiled_catalogue, settings):  # noqa: F811 (the fixture imported above)
    settings.LOCALE_PATHS = [str(compiled_catalogue)]


def partly_refunded(template):
    """A coupon whose order was refunded in part: the default policy keeps it used."""
    coupon = fresh_coupon(template)
    redeemed(coupon, "order-P")
    refund_receive(refund_id="refund-P", order_id="order-P", payment_id="pay-order-P",
                   refund_amount=Decimal("10.00"), refund_type="PARTIAL", ctx=SYSTEM)
    return coupon


def page_of(client, coupon, **headers) -> str:
    answer = client.get(reverse("console:coupon", args=[coupon.pk]), **headers)
    assert answer.status_code == 200
    return answer.content.decode()


def test_the_refund_reply_gives_the_rules_reason_in_the_customers_words(signed_in, template):
    coupon = partly_refunded(template)

    said = replies(page_of(signed_in("support"), coupon), "refund")

    assert said["zh-hans"].startswith("您好！订单 order-P 退款后，您的优惠券仍为已使用")
    assert "（原因：订单为部分退款）。如有其他问题，欢迎随时联系我们。" in said["zh-hans"]
    assert "(reason: the order was only partly refunded)." in said["en"]
    assert "规则" not in said["zh-hans"] and "version" not in said["en"]


def test_a_chinese_reply_has_no_half_width_space_or_colon(signed_in, template):
    coupon = partly_refunded(template)

    page = page_of(signed_in("support"), coupon)

    for kind in ("refund", "state"):
        chinese = replies(page, kind)["zh-hans"]
        assert "。 " not in chinese and "！ " not in chinese, chinese
        # A clock's colon (20:00) is a number's; any other half-width mark is a mistake.
        assert not re.search(r"[:;,()]", re.sub(r"\d\d:\d\d", "", chinese)), chinese
        assert chinese.endswith("如有其他问题，欢迎随时联系我们。")


def test_reply_times_are_beijing_time_whatever_the_agents_browser_says(signed_in, template):
    coupon = partly_refunded(template)
    used_at = coupon.redemptions.get().created_at
    client = signed_in("support")
    client.cookies[BROWSER_COOKIE] = "UTC"

    said = replies(page_of(client, coupon), "state")

    beijing = used_at.astimezone(ZoneInfo("Asia/Shanghai"))
    assert f"{beijing.year}年{beijing.month}月{beijing.day}日 {beijing:%H:%M}（北京时间）" \
        in said["zh-hans"]
    assert f"{beijing:%H:%M} (Beijing time)" in said["en"]
    assert "UTC" not in said["zh-hans"] + said["en"]


def test_the_customer_time_zone_is_a_deployment_setting(signed_in, template, settings):
    settings.COUPON_CUSTOMER_TIME_ZONE = "Asia/Tokyo"
    coupon = partly_refunded(template)

    said = replies(page_of(signed_in("support"), coupon), "state")

    assert "（UTC+9）" in said["zh-hans"] and "(UTC+9)" in said["en"]


def test_the_refund_answer_is_the_first_block_and_the_advice_to_look_for_it_is_gone(
        signed_in, template):
    coupon = partly_refunded(template)

    page = page_of(signed_in("support"), coupon, HTTP_ACCEPT_LANGUAGE="zh-hans")

    panel = page[page.index('id="check-title"'):]
    assert panel.index("退款后优惠券会退回吗？") < panel.index("这张券为什么不能用？")
    assert "如果该订单已退款，请查看退款决策" not in page
    assert "已说明优惠券是否退回" in page


def test_without_a_refund_decision_the_panel_starts_with_the_answer_and_keeps_the_advice(
        signed_in, template):
    coupon = fresh_coupon(template)
    redeemed(coupon, "order-P")

    page = page_of(signed_in("support"), coupon, HTTP_ACCEPT_LANGUAGE="zh-hans")

    assert "退款后优惠券会退回吗？" not in page
    assert "如果该订单已退款，请查看退款决策" in page


def test_an_unknown_customer_time_zone_stops_the_start_with_a_sentence(monkeypatch):
    monkeypatch.setenv("COUPON_CUSTOMER_TIME_ZONE", "Beijing")
    with pytest.raises(ImproperlyConfigured, match="COUPON_CUSTOMER_TIME_ZONE must be a time "
                                                   "zone such as Asia/Shanghai, not 'Beijing'"):
        env_time_zone("COUPON_CUSTOMER_TIME_ZONE", default="Asia/Shanghai")
    monkeypatch.delenv("COUPON_CUSTOMER_TIME_ZONE")
    assert env_time_zone("COUPON_CUSTOMER_TIME_ZONE", default="Asia/Shanghai") == "Asia/Shanghai"


def test_a_rule_labelled_in_both_languages_is_cited_in_the_customers(signed_in, template):
    default = ReturnPolicy.objects.get(code="default")
    rules = [dict(rule) for rule in default.versions.get(number=1).rules]
    rules[2] = {**rules[2], "labels": {"en": "part refunds keep the coupon",
                                       "zh-hans": "部分退款不退券"}}
    draft = policy_draft_create(default, "user:pat", rules=rules)
    policy_publish(draft, "user:pat")
    coupon = partly_refunded(template)

    said = replies(page_of(signed_in("support"), coupon), "refund")

    assert "（原因：部分退款不退券）" in said["zh-hans"]
    assert "(reason: part refunds keep the coupon)." in said["en"]

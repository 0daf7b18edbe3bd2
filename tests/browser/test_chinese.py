"""The support and policy admin stories in Simplified Chinese, in a real browser.

Each person signs in, presses the header's 简体中文 switch once, and works from there. Pages
are found by address and form, not by their (translated) words; what is asserted in Chinese
is the header this branch translates, the page's lang and dir, and axe-core's verdict on each
Chinese page. Screenshots of the Chinese pages go to the test's tmp dir.
"""

import re

import pytest
from playwright.sync_api import expect

from refunds.models import ReturnPolicy, ReturnPolicyVersion
from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.browser.policy_editing import add_condition
from tests.refunds.conftest import issue, redeem
from tests.refunds.test_impact_replay import stored_history
from tests.timeline.incident import incident_coupon
from timeline.models import ConsolePreference

CJK = re.compile(r"[\u4e00-\u9fff]")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def switch_to_chinese(page):
    page.get_by_role("button", name="简体中文", exact=True).click()
    page.wait_for_load_state()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")


def assert_chinese_page(page, shot):
    html = page.locator("html")
    expect(html).to_have_attribute("lang", "zh-hans")
    expect(html).to_have_attribute("dir", "ltr")
    expect(page.get_by_role("button", name="退出登录")).to_be_visible()
    expect(page.get_by_role("button", name="English", exact=True)).to_be_visible()
    expect(page.get_by_role("searchbox", name="按任意 ID 搜索")).to_be_visible()
    assert page.title().endswith("· 优惠券控制台")
    assert axe_violations(page) == []
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot}")


def test_support_reads_the_incident_answer_in_chinese(page, person, template, clock, tmp_path):
    coupon = incident_coupon(template, clock)
    sam = person("support", "sam")
    sign_in(page, "sam")
    switch_to_chinese(page)
    assert ConsolePreference.objects.get(user=sam).language == "zh-hans"
    assert_chinese_page(page, tmp_path / "dashboard-zh.png")

    page.keyboard.press("/")
    page.keyboard.type("order_demo_A")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/coupons/{coupon.pk}/")

    answer = page.locator("section.check .answer")
    expect(answer).to_be_visible()
    # The plain answer reads in Chinese; the order id in it stays as the order service wrote it.
    assert CJK.search(answer.inner_text()), answer.inner_text()
    expect(page.locator("section.check")).to_contain_text("核查")
    assert page.locator("#timeline .tl-refusal").inner_text().count("order_demo_A") >= 1
    assert_chinese_page(page, tmp_path / "coupon-zh.png")

    # Remembered: a new browser of the same person opens in Chinese after signing in.
    context = page.context.browser.new_context(base_url=page.url.split("/coupons/")[0])
    other = context.new_page()
    sign_in(other, "sam", next_path=f"/coupons/{coupon.pk}/")
    expect(other.locator("html")).to_have_attribute("lang", "zh-hans")
    context.close()


def test_policy_admin_drafts_and_publishes_in_chinese(page, person, template, ctx, tmp_path):
    coupons = [issue(template, ctx, user_id=f"u{n}") for n in range(2)]
    for n, coupon in enumerate(coupons):
        redeem(coupon, ctx, order_id=f"order-real-{n}")
    stored_history(coupons, 50)
    person("policy_admin", "paula")
    policy = ReturnPolicy.objects.get(code=ReturnPolicy.DEFAULT_CODE)

    sign_in(page, "paula", next_path=f"/policies/{policy.pk}/")
    switch_to_chinese(page)
    page.locator(f"form[action='/policies/{policy.pk}/drafts/'] button[type=submit]").click()
    page.wait_for_url(f"**/policies/{policy.pk}/versions/2/edit/")

    # A value the engine refuses: the field's error beside it, in the page's language.
    page.locator("#id_form-4-days_since_redemption_max").fill("7")
    # The labels say the new number too (a label saying 30 days on a 7-day rule is refused).
    page.locator("#id_form-4-label").fill("Full refund within 7 days returns the coupon")
    page.locator("#id_form-4-label_zh").fill("核销后 7 天内全额退款，退还优惠券")
    add_condition(page, 4, "refunded_share_min")
    page.locator("#id_form-4-refunded_share_min").fill("2")
    page.locator("#editor button.primary").click()
    expect(page.locator("#id_form-4-refunded_share_min-errors")).not_to_be_empty()
    errors = page.locator("#id_form-4-refunded_share_min-errors").inner_text()
    assert CJK.search(errors), errors
    assert_chinese_page(page, tmp_path / "policy-editor-zh.png")
    page.locator("#id_form-4-refunded_share_min").fill("")
    page.locator("#editor button.primary").click()
    expect(page.locator("#id_form-4-refunded_share_min-errors")).to_have_count(0)
    page.wait_for_load_state("networkidle")  # the save's redirect, before we leave the page

    page.goto(f"/policies/{policy.pk}/versions/2/impact/")
    expect(page.locator("#impact-changed")).to_be_visible()
    expect(page.locator("h1")).to_contain_text("影响评估")
    assert_chinese_page(page, tmp_path / "policy-impact-zh.png")
    page.locator("#id_confirm").check()
    page.locator(f"form[action='/policies/{policy.pk}/versions/2/publish/'] "
                 "button[type=submit]").click()
    page.wait_for_url(f"**/policies/{policy.pk}/versions/2/")
    assert_chinese_page(page, tmp_path / "policy-published-zh.png")
    draft = ReturnPolicyVersion.objects.get(policy=policy, number=2)
    assert (draft.status, draft.rules[4]["when"]["days_since_redemption_max"]) == (
        "PUBLISHED", 7)
    assert draft.rules[4]["labels"]["zh-hans"] == "核销后 7 天内全额退款，退还优惠券"
    expect(page.locator("ol.rules")).to_contain_text("5. 核销后 7 天内全额退款，退还优惠券")


def test_axe_finds_what_a_screen_reader_would_miss(page):
    """The accessibility check fires: no page language, an image without alt, a bare input."""
    page.set_content('<html><body><img src="x.png"><input type="text"></body></html>')
    rules = {violation.split(":")[0] for violation in axe_violations(page)}
    assert {"html-has-lang", "image-alt", "label"} <= rules

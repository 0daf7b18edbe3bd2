"""A 客服 is given a phone number: the search finds the customer, whatever the spelling, and
one click opens everything they hold, in English and in Chinese; axe finds nothing."""

import pytest
from playwright.sync_api import expect

from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.browser.test_chinese import switch_to_chinese
from tests.timeline import queue_objects
from tests.timeline.customers import customer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def search_for(page, text: str) -> None:
    page.keyboard.press("/")  # the search box takes the focus from anywhere
    page.keyboard.type(text)
    page.keyboard.press("Enter")
    page.wait_for_load_state()


def test_support_finds_a_customer_by_phone_and_opens_their_page(page, person, template):
    customer("u1", nickname="王小明")
    free = queue_objects.fresh_coupon(template)
    waiting = queue_objects.pending_decision(queue_objects.fresh_coupon(template))
    person("support", "sam")
    sign_in(page, "sam")

    search_for(page, "+86 138-1234-5678")
    found = page.locator("#found-customers")
    expect(found).to_contain_text("matched by phone 138****5678")
    assert axe_violations(page) == []
    found.get_by_role("link", name="王小明").click()
    page.wait_for_url("**/customers/u1/")

    expect(page.get_by_role("heading", level=1)).to_contain_text("Customer 王小明")
    expect(page.locator("#customer-coupons")).to_contain_text(str(free.pk))
    expect(page.locator("#customer-waiting")).to_contain_text(f"#{waiting.pk}")
    assert axe_violations(page) == []

    switch_to_chinese(page)
    search_for(page, "13812345678")
    expect(page.locator("#found-customers")).to_contain_text("手机号 138****5678")
    assert axe_violations(page) == []
    page.locator("#found-customers").get_by_role("link", name="王小明").click()
    page.wait_for_url("**/customers/u1/")

    expect(page.get_by_role("heading", level=1)).to_contain_text("客户 王小明")
    expect(page.locator("#customer-waiting")).to_contain_text("当前等待处理")
    assert axe_violations(page) == []

"""Support copies the ready reply into the customer chat: Chinese first, one click, said."""

import pytest
from playwright.sync_api import expect

from tests.browser.accessibility import axe_violations
from tests.browser.conftest import sign_in
from tests.timeline.incident import incident_coupon
from tests.zh_catalogue import compiled_catalogue  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_support_copies_the_chinese_reply_with_one_click(
        page, person, template, clock, settings, compiled_catalogue):  # noqa: F811
    settings.LOCALE_PATHS = [str(compiled_catalogue)]
    coupon = incident_coupon(template, clock)
    person("support", "sam")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    sign_in(page, "sam", f"/coupons/{coupon.pk}/")

    replies = page.locator(".replies").first
    texts = replies.locator("p[lang]").all_inner_texts()
    assert texts[0].startswith("您好！您的优惠券已于")
    assert texts[1].startswith("Hello! Your coupon was used")
    assert axe_violations(page) == []

    replies.get_by_role("button", name="Copy the reply in Chinese").click()

    # The clipboard answers asynchronously: wait for the live region to say it.
    expect(replies.get_by_role("status").first).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == texts[0]

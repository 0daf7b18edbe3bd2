"""A goodwill coupon with four eyes, in a real browser, in English and in Chinese: support
proposes it from the coupon page, an operator approves it in the Goodwill queue and the coupon
is issued. Every page passes axe-core; every Chinese page shows no English word outside codes,
ids and badges beyond what the test typed."""

import pytest
from playwright.sync_api import expect

from coupons.models import CouponOperation, GoodwillProposal
from tests.browser.accessibility import axe_violations
from tests.browser.chinese_words import english_words
from tests.browser.conftest import sign_in
from tests.browser.test_chinese import switch_to_chinese
from tests.browser.test_operator_forms_in_both_languages import (  # noqa: F401 (fixture)
    press,
    template,
)
from tests.timeline.queue_objects import fresh_coupon

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LANGUAGES = ["en", "zh-hans"]
# What the test typed, its people's logins and the fixtures' actor id ("test").
TYPED = ["餐品送达时已凉", "order-7", "order-8", "sam", "olga", "test"]


def checked(page, language):
    """The page is in `language`, passes axe, and in Chinese says no English word."""
    expect(page.locator("html")).to_have_attribute("lang", language)
    assert axe_violations(page) == [], page.url
    if language != "en":
        assert english_words(page, TYPED) == [], page.url


def signed_in_as(page, username, path, language):
    page.context.clear_cookies()
    sign_in(page, username, path)
    if language != "en":
        switch_to_chinese(page)
    checked(page, language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_support_proposes_and_an_operator_approves_a_goodwill_coupon(
        page, person, template, language):  # noqa: F811
    coupon = fresh_coupon(template, "u7")
    person("support", "sam")
    person("operator", "olga")
    signed_in_as(page, "sam", f"/coupons/{coupon.pk}/", language)

    page.locator(f"a[href='/goodwill/propose?coupon={coupon.pk}']").click()
    page.wait_for_url(f"**/goodwill/propose?coupon={coupon.pk}")
    checked(page, language)
    page.locator("#propose-goodwill select[name=template_id]").select_option(str(template.pk))
    page.locator("#propose-goodwill input[name=answers]").fill("order-7")
    page.locator("#propose-goodwill textarea[name=reason]").fill("餐品送达时已凉")
    press(page, page.locator("#propose-goodwill form.action button[type=submit]"))
    expect(page.locator(".queue-item .badge", has_text="PROPOSED")).to_be_visible()
    checked(page, language)
    proposal = GoodwillProposal.objects.get()
    assert (proposal.user_id, proposal.created_by) == ("u7", "user:sam")

    signed_in_as(page, "olga", "/goodwill/", language)
    press(page, page.locator(f"#goodwill-{proposal.pk} section.decide-approve button"))
    expect(page.locator(f"#goodwill-{proposal.pk} .badge", has_text="APPROVED")).to_be_visible()
    checked(page, language)

    proposal.refresh_from_db()
    assert proposal.decided_by == "user:olga"
    assert CouponOperation.objects.get(coupon=proposal.issued_coupon).op_type == "ISSUE"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_proposer_gets_no_button_but_the_reason(
        page, person, template, language):  # noqa: F811
    coupon = fresh_coupon(template, "u8")
    person("operator", "olga")
    signed_in_as(page, "olga", f"/goodwill/propose?coupon={coupon.pk}", language)
    page.locator("#propose-goodwill select[name=template_id]").select_option(str(template.pk))
    page.locator("#propose-goodwill input[name=answers]").fill("order-8")
    page.locator("#propose-goodwill textarea[name=reason]").fill("餐品送达时已凉")
    press(page, page.locator("#propose-goodwill form.action button[type=submit]"))
    expect(page.locator(".queue-item .badge", has_text="PROPOSED")).to_be_visible()

    page.goto("/goodwill/")
    proposal = GoodwillProposal.objects.get()
    expect(page.locator(f"#goodwill-{proposal.pk} .four-eyes")).to_be_visible()
    expect(page.locator(f"#goodwill-{proposal.pk} section.decide-approve")).to_have_count(0)
    checked(page, language)

"""Every operator form and bulk action, pressed in English and in Chinese in a real browser.

Each test runs once per language: the operator signs in, presses the header's 简体中文 switch
for the Chinese run, and works by the forms' ids and names, never by their (translated) words.
Every page visited passes axe-core (WCAG 2.1 AA), and every Chinese page shows no English word
outside codes, ids and badges (tests/browser/chinese_words.py) beyond what the test typed.
"""

import pytest
from playwright.sync_api import expect

from coupons.models import CouponOperation
from coupons.services import template_create
from coupons.services.cases import case_open
from refunds.models import Compensation, RefundCoupon
from tests.browser.accessibility import axe_violations
from tests.browser.chinese_words import english_words
from tests.browser.conftest import sign_in
from tests.browser.test_chinese import switch_to_chinese
from tests.refunds.conftest import default_policy  # noqa: F401 (a transactional test's flush drops it)
from tests.timeline.incident import incident_coupon
from tests.timeline.queue_objects import (
    fresh_coupon,
    late_payment_case,
    pending_decision,
    proposal,
    redeemed,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LANGUAGES = ["en", "zh-hans"]
# What the test and its fixtures typed (the proposals' reason, tests/timeline/queue_objects.py),
# its people's logins and the fixtures' actor id ("test": real actors are "user:…",
# "system:…"). The default policy's rule labels are read in Chinese (refunds.rule_labels).
TYPED = ["客户已退货", "重复退款", "补偿", "误核销", "已人工处理", "redeemed by mistake", "olga",
         "otto", "test"]


@pytest.fixture
def template(clock):
    from decimal import Decimal

    return template_create(code="off30", name="满200减30", kind="AMOUNT_OFF",
                           face_value=Decimal("30.00"), min_order_amount=Decimal("200.00"),
                           valid_days=30)


def checked(page, language):
    """The page is in `language`, passes axe, and in Chinese says no English word."""
    expect(page.locator("html")).to_have_attribute("lang", language)
    assert axe_violations(page) == [], page.url
    if language != "en":
        assert english_words(page, TYPED) == [], page.url


def start(page, person, language, username, path):
    person("operator", username)
    sign_in(page, username, path)
    if language != "en":
        switch_to_chinese(page)
    checked(page, language)


def press(page, button):
    """Press a queue button and accept its confirmation box."""
    page.once("dialog", lambda dialog: dialog.accept())
    button.click()


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_operator_approves_one_decision_and_rejects_another(
        page, person, template, default_policy, language):  # noqa: F811
    approve, reject = (pending_decision(fresh_coupon(template, f"u{n}"), order_id=f"order-{n}")
                       for n in range(2))
    start(page, person, language, "olga", "/approvals/")

    page.locator(f"#approvedecisionform-{approve.pk}-action").select_option("RETURN")
    page.locator(f"#approvedecisionform-{approve.pk}-note").fill("客户已退货")
    press(page, page.locator(f"#decision-{approve.pk} section.decide-approve button"))
    expect(page.locator(f"#decision-{approve.pk} table.ledger-new")).to_be_visible()
    checked(page, language)

    page.locator(f"#rejectform-{reject.pk}-note").fill("重复退款")
    press(page, page.locator(f"#decision-{reject.pk} section.decide-reject button"))
    expect(page.locator(f"#decision-{reject.pk} .outcome")).to_be_visible()
    checked(page, language)

    assert CouponOperation.objects.filter(coupon_id=approve.coupon_id, op_type="RETURN").exists()
    assert RefundCoupon.objects.get(pk=reject.pk).status == RefundCoupon.Status.REJECTED


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_operator_resolves_a_case(page, person, template, language):
    case = late_payment_case(fresh_coupon(template), order_id="order-case")
    start(page, person, language, "olga", "/cases/")

    page.locator(f"#caseresolveform-{case.pk}-action").select_option("RESOLVE")
    page.locator(f"#caseresolveform-{case.pk}-note").fill("已人工处理")
    press(page, page.locator(f"#case-{case.pk} section.decide-resolve button"))
    expect(page.locator(f"#case-{case.pk} .outcome")).to_be_visible()
    checked(page, language)

    case.refresh_from_db()
    assert (case.status, case.resolution) == ("RESOLVED", "MANUAL")


@pytest.mark.parametrize("language", LANGUAGES)
def test_one_operator_proposes_and_another_approves_and_rejects(
        page, person, template, language):
    coupon = fresh_coupon(template)
    redeem = redeemed(coupon)
    other = proposal(fresh_coupon(template, "u2"), proposer="user:someone-else")
    person("operator", "otto")
    start(page, person, language, "olga", f"/coupons/{coupon.pk}/")

    page.locator(f"a[href='/compensations/propose?operation={redeem.pk}']").click()
    page.wait_for_url(f"**/compensations/propose?operation={redeem.pk}")
    checked(page, language)
    page.locator("#propose textarea[name=reason]").fill("误核销")
    press(page, page.locator("main form.action button[type=submit]"))
    expect(page.locator(".queue-item .badge", has_text="PROPOSED")).to_be_visible()
    checked(page, language)
    mine = Compensation.objects.get(operation=redeem)

    page.context.clear_cookies()
    sign_in(page, "otto", "/compensations/")
    if language != "en":
        switch_to_chinese(page)
    checked(page, language)
    press(page, page.locator(f"#compensation-{mine.pk} section.decide-approve button"))
    expect(page.locator(f"#compensation-{mine.pk} .badge", has_text="APPROVED")).to_be_visible()
    checked(page, language)
    page.locator(f"#rejectform-{other.pk}-note").fill("补偿")
    press(page, page.locator(f"#compensation-{other.pk} section.decide-reject button"))
    expect(page.locator(f"#compensation-{other.pk} .badge", has_text="REJECTED")).to_be_visible()
    checked(page, language)


def bulk(page, language, ids, **fields):
    """Open the bulk box, pick `ids`, fill `fields` (by the inputs' ids) and press `verb`'s
    button; then confirm on the page that names every item."""
    page.locator("#bulk summary").click()
    checked(page, language)
    for pk in ids:
        page.locator(f"#bulk input[value='{pk}']").check()
    verb = fields.pop("verb", None)
    for field_id, value in fields.items():
        field = page.locator(f"#{field_id}")
        if field.evaluate("el => el.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
    page.locator(f"#bulk button[value='{verb}']" if verb else "#bulk button[type=submit]").click()
    page.wait_for_load_state()
    for pk in ids:
        expect(page.locator(f"#item-{pk}")).to_be_visible()
    checked(page, language)
    page.locator("main form button[type=submit].primary").click()
    page.wait_for_load_state()
    expect(page.get_by_role("status")).to_be_visible()
    checked(page, language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_bulk_reject_of_decisions_and_no_bulk_approve_of_manual_reviews(
        page, person, template, default_policy, language):  # noqa: F811
    decisions = [pending_decision(fresh_coupon(template, f"u{n}"), order_id=f"order-{n}")
                 for n in range(3)]
    start(page, person, language, "olga", "/approvals/")

    bulk(page, language, [d.pk for d in decisions[:2]], **{"bulk-note": "重复退款"},
         verb="reject")
    assert {RefundCoupon.objects.get(pk=d.pk).status for d in decisions[:2]} == {"REJECTED"}

    # Bulk approve cannot decide a manual review: it is not offered for one, and the queue
    # links to the manual reviews' own bulk form instead.
    page.goto("/approvals/")
    page.locator("#bulk summary").click()
    expect(page.locator("#bulk button[value='approve']")).to_have_count(0)
    expect(page.locator("a[href='/approvals/manual-reviews']")).to_be_visible()
    checked(page, language)
    assert RefundCoupon.objects.get(pk=decisions[2].pk).status == "PENDING_APPROVAL"


@pytest.mark.parametrize("language", LANGUAGES)
def test_bulk_resolve_of_cases(page, person, template, language):
    cases = [late_payment_case(fresh_coupon(template, f"u{n}"), order_id=f"order-{n}")
             for n in range(2)]
    start(page, person, language, "olga", "/cases/")

    bulk(page, language, [c.pk for c in cases],
         **{"bulk-action": "DISMISS", "bulk-note": "已人工处理"})

    for case in cases:
        case.refresh_from_db()
        assert case.status == "DISMISSED"


def test_the_english_words_check_fires_on_a_chinese_page(page, person, template):
    person("operator", "olga")
    sign_in(page, "olga", "/approvals/")
    switch_to_chinese(page)
    assert english_words(page, ["olga"]) == []  # the header's login name, an id

    page.evaluate("""document.querySelector("main h1").insertAdjacentHTML("beforeend",
        ' <span>Approve <code>NOT_A_WORD</code> order_demo_A</span>')""")

    assert english_words(page, ["olga"]) == ["Approve (span)"]


def test_the_incident_coupon_page_in_chinese_says_no_english_word(page, person, template, clock):
    """The conflict case's summary is read from its code, so the diagnosis of A's late payment
    ("order B used the coupon: refund this order's discount") is Chinese too; `start` checks
    the whole page for English words."""
    coupon = incident_coupon(template, clock)
    case_open(coupon=coupon, order_id="order_demo_A", fact_type="PaymentSucceeded",
              payment_id="payment_demo_PA", evidence={"payment_id": "payment_demo_PA"})

    start(page, person, "zh-hans", "olga", f"/coupons/{coupon.pk}/")

    answer = page.locator('[aria-labelledby="check-title"]').inner_text()
    assert "已使用该券：请改为退还本订单的优惠金额" in answer

"""A waiting refund decision follows its coupon, and manual reviews are decided on one form,
in a real browser, in English and Chinese, at a laptop's and a phone's width.

Every page passes axe-core (WCAG 2.1 AA) and, in Chinese, shows no English word outside
codes, ids and badges (tests/timeline/test_decisions_stay_true.py for the rules behind them).
"""

import pytest
from playwright.sync_api import expect

from refunds.models import RefundCoupon
from tests.browser.test_operator_forms_in_both_languages import (  # noqa: F401 (fixtures)
    LANGUAGES,
    checked,
    press,
    start,
    template,
)
from tests.browser.test_phone_width import page_overflow
from tests.refunds.conftest import default_policy  # noqa: F401 (a transactional test's flush drops it)
from tests.timeline.queue_objects import fresh_coupon, pending_decision
from tests.timeline.test_decisions_stay_true import reversed_meanwhile

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"laptop": {"width": 1366, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_approval_after_the_coupon_moved_says_why_and_the_page_offers_what_fits(
        page, person, template, default_policy, language):  # noqa: F811
    decision = pending_decision(fresh_coupon(template))
    page.set_viewport_size(SIZES["laptop"])
    start(page, person, language, "olga", "/approvals/")
    reversed_meanwhile(decision)  # while the page is open

    page.locator(f"#approvedecisionform-{decision.pk}-action").select_option("RETURN")
    press(page, page.locator(f"#decision-{decision.pk} section.decide-approve button"))

    alert = page.locator(f"#decision-{decision.pk} .outcome.error")
    expect(alert).to_be_visible()
    expect(alert.locator("code")).to_have_text("INVALID_STATE")
    expect(alert).not_to_contain_text("current_state")
    checked(page, language)
    assert RefundCoupon.objects.get(pk=decision.pk).status == "PENDING_APPROVAL"

    page.goto("/approvals/")
    expect(page.locator(f"#decision-{decision.pk} .recommendation.now")).to_be_visible()
    offered = page.locator(f"#approvedecisionform-{decision.pk}-action option")
    assert offered.evaluate_all("options => options.map(o => o.value)") == ["", "VOID"]
    checked(page, language)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_manual_reviews_are_decided_together_by_keyboard(
        page, person, template, default_policy, language, size):  # noqa: F811
    returned, voided, later = (
        pending_decision(fresh_coupon(template, f"u{n}"), order_id=f"order-{n}") for n in range(3)
    )
    page.set_viewport_size(SIZES[size])
    start(page, person, language, "olga", "/approvals/")

    page.locator("a[href='/approvals/manual-reviews']").click()
    page.wait_for_load_state()
    checked(page, language)
    assert page_overflow(page) == 0
    # By keyboard: from "leave for later", the arrow keys pick the next choice (RETURN).
    page.locator(f"input[name='action-{returned.pk}'][value='']").focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator(f"input[name='action-{returned.pk}'][value='RETURN']")).to_be_checked()
    page.locator(f"input[name='action-{voided.pk}'][value='VOID']").check()
    page.locator("form.manual-bulk button[type=submit]").click()
    page.wait_for_load_state()

    expect(page.get_by_role("status")).to_be_visible()
    checked(page, language)
    assert page_overflow(page) == 0
    statuses = dict(
        RefundCoupon.objects.filter(pk__in=[returned.pk, voided.pk, later.pk]).values_list(
            "pk", "executed_action"
        )
    )
    assert statuses == {returned.pk: "RETURN", voided.pk: "VOID", later.pk: ""}

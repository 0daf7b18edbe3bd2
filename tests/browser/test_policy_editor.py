"""A policy admin changes the return policy in a real browser: draft, edit, impact, publish."""

import pytest
from playwright.sync_api import expect

from refunds.impact import policy_impact
from refunds.models import ReturnPolicyVersion
from tests.browser.conftest import sign_in
from tests.browser.policy_editing import add_condition
from tests.refunds.conftest import issue, redeem
from tests.refunds.test_impact_replay import stored_history

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_policy_admin_drafts_edits_previews_and_publishes(page, person, template, ctx):
    coupons = [issue(template, ctx, user_id=f"u{n}") for n in range(2)]
    for n, coupon in enumerate(coupons):
        redeem(coupon, ctx, order_id=f"order-real-{n}")
    stored_history(coupons, 200)
    person("policy_admin", "paula")

    sign_in(page, "paula")
    page.get_by_role("link", name="Policies").click()
    page.get_by_role("link", name="default", exact=True).click()
    page.get_by_role("button", name="New draft from v1").click()

    expect(page.get_by_role("heading", name="Edit draft v2")).to_be_visible()
    page.locator("#id_form-4-label").fill("Full refund within 7 days returns the coupon")
    page.locator("#id_form-4-label_zh").fill("核销后 7 天内全额退款，退还优惠券")
    page.locator("#id_form-4-days_since_redemption_max").fill("7")
    add_condition(page, 4, "refunded_share_min")
    page.locator("#id_form-4-refunded_share_min").fill("2")
    page.get_by_role("button", name="Save draft").click()

    # Refused by the engine: the message sits beside the input, the page keeps what was typed.
    expect(page.locator("#id_form-4-refunded_share_min-errors")).to_have_text(
        "must be between 0 and 1")
    assert ReturnPolicyVersion.objects.get(policy__code="default", number=2).rules[4]["when"] \
        == {"refund_type": "FULL", "days_since_redemption_max": 30}
    # The refusal is swapped in by htmx, which settles the new inputs' attributes a moment
    # later: typing before then can be overwritten. Settled, the error summary takes focus.
    expect(page.locator("[data-error-summary]")).to_be_focused()
    page.locator("#id_form-4-refunded_share_min").fill("")
    page.get_by_role("button", name="Save draft").click()

    expect(page.get_by_text("Saved draft v2: 6 rules.")).to_be_visible()
    expect(page.get_by_text("redeemed at most 7 days ago")).to_be_visible()
    page.get_by_role("link", name="Preview impact and publish").click()

    draft = ReturnPolicyVersion.objects.get(policy__code="default", number=2)
    impact = policy_impact(draft)
    assert impact["changed"] > 0
    expect(page.locator("#impact-decisions")).to_have_text(str(impact["decisions"]))
    expect(page.locator("#impact-changed")).to_have_text(str(impact["changed"]))
    page.get_by_label("I have read the impact").check()
    page.get_by_role("button", name="Publish v2").click()

    expect(page.get_by_text("Published v2: refunds from now on use it.")).to_be_visible()
    expect(page.get_by_role("heading", name="v2 PUBLISHED")).to_be_visible()
    expect(page.get_by_role("link", name="Edit rules")).to_have_count(0)
    draft.refresh_from_db()
    assert (draft.status, draft.published_by) == ("PUBLISHED", "user:paula")
    assert draft.rules[4]["when"]["days_since_redemption_max"] == 7


def test_support_reads_a_policy_without_its_buttons(page, person):
    person("support", "sam")

    sign_in(page, "sam", next_path="/policies/")
    page.get_by_role("link", name="default", exact=True).click()

    expect(page.get_by_role("heading", name="Default return policy")).to_be_visible()
    expect(page.get_by_role("link", name="v1")).to_be_visible()
    expect(page.get_by_role("button", name="New draft from v1")).to_have_count(0)
    expect(page.get_by_role("link", name="Policies", exact=True)).to_have_count(0)
    page.get_by_role("link", name="v1").click()
    expect(page.get_by_text("When the refund is FULL, and redeemed at most 30 days ago"))\
        .to_be_visible()
    expect(page.get_by_role("link", name="Edit rules")).to_have_count(0)

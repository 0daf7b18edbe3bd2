"""A form answered with errors moves focus to their summary at the top, and each line's link
moves focus to its field: in both languages, with axe on the page."""

import pytest
from playwright.sync_api import expect

from refunds.models import ReturnPolicy
from refunds.services.policies import policy_draft_create
from tests.browser.accessibility import axe_violations
from tests.browser.chinese_words import english_words
from tests.browser.conftest import sign_in
from tests.browser.policy_editing import add_condition
from tests.browser.test_chinese import switch_to_chinese
from tests.refunds.conftest import default_policy  # noqa: F401 (a transactional test's flush drops it)
from tests.timeline.queue_objects import fresh_coupon, pending_decision

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LANGUAGES = ["en", "zh-hans"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_policy_editors_errors_take_focus_and_lead_to_their_field(
        page, person, clock, default_policy, language):  # noqa: F811
    draft = policy_draft_create(ReturnPolicy.objects.get(code="default"), "user:paula")
    person("policy_admin", "paula")
    sign_in(page, "paula", f"/policies/{draft.policy_id}/versions/{draft.number}/edit/")
    if language != "en":
        switch_to_chinese(page)

    add_condition(page, 4, "refunded_share_min")
    page.locator("#id_form-4-refunded_share_min").fill("2")
    page.locator("#editor button.primary").click()

    summary = page.locator("[data-error-summary]")
    expect(summary).to_be_focused()
    link = summary.locator("a[href='#id_form-4-refunded_share_min']")
    expect(link).to_have_count(1)
    assert axe_violations(page) == []
    if language != "en":
        # The login is data; the default policy's name and rule labels read in Chinese
        # (refunds.rule_labels).
        assert english_words(page, ["paula"]) == []
    link.click()
    expect(page.locator("#id_form-4-refunded_share_min")).to_be_focused()


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_refused_queue_form_swapped_in_place_focuses_its_summary(
        page, person, template, default_policy, language):  # noqa: F811
    decision = pending_decision(fresh_coupon(template))
    person("operator", "olga")
    sign_in(page, "olga", "/approvals/")
    if language != "en":
        switch_to_chinese(page)
    note = page.locator(f"#rejectform-{decision.pk}-note")
    # As a browser that does not check `required` sends it: the server's answer is the check.
    note.evaluate("textarea => textarea.removeAttribute('required')")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"#decision-{decision.pk} section.decide-reject button").click()

    summary = page.locator(f"#decision-{decision.pk} [data-error-summary]")
    expect(summary).to_be_focused()
    assert axe_violations(page) == []
    summary.locator("a").click()
    expect(page.locator(f"#rejectform-{decision.pk}-note")).to_be_focused()

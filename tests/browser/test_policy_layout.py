"""The policy pages for a policy admin, with and without JavaScript.

The editor shows only the conditions a rule uses and adds one in place (JavaScript) or by a
round trip (none); the Action menu overlaps nothing; rules read as one sentence each; the diff
says what changed inside a rule; the version list marks the version in force. axe on each.
"""

import pytest
from playwright.sync_api import expect

from refunds.models import ReturnPolicy, ReturnPolicyVersion
from refunds.services.policies import policy_draft_create, policy_draft_update, policy_publish
from tests.browser.accessibility import axe_violations
from tests.browser.conftest import PASSWORD, sign_in
from tests.browser.policy_editing import add_condition
from tests.browser.test_chinese import switch_to_chinese

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def draft(clock, template):
    policy = ReturnPolicy.objects.get(code=ReturnPolicy.DEFAULT_CODE)
    return policy_draft_create(policy, "user:paula")


def edit_path(draft) -> str:
    return f"/policies/{draft.policy_id}/versions/{draft.number}/edit/"


def boxes_overlap(first, second) -> bool:
    a, b = first.bounding_box(), second.bounding_box()
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def test_the_editor_shows_used_conditions_and_adds_one_in_place(page, person, draft):
    person("policy_admin", "paula")
    sign_in(page, "paula", edit_path(draft))
    rule = page.locator("#rule-4")  # "Full refund within 30 days ...": two conditions

    expect(rule.locator(".condition:visible")).to_have_count(2)
    expect(rule.get_by_label("Refund type")).to_be_visible()
    expect(rule.get_by_label("Days since redemption at most")).to_be_visible()
    expect(rule.get_by_label("Risk flag")).to_be_hidden()
    assert axe_violations(page) == []

    add_condition(page, 4, "risk_flag")

    expect(rule.get_by_label("Risk flag")).to_be_visible()
    expect(rule.get_by_label("Risk flag")).to_be_focused()
    assert page.url.endswith(edit_path(draft))  # no round trip: shown in place
    rule.get_by_label("Risk flag").select_option("no")
    page.get_by_role("button", name="Save draft").click()
    expect(page.get_by_text("Saved draft v2: 6 rules.")).to_be_visible()
    draft.refresh_from_db()
    assert draft.rules[4]["when"] == {"refund_type": "FULL", "days_since_redemption_max": 30,
                                      "risk_flag": False}


def test_without_javascript_add_condition_asks_the_server(chromium, live_server, person, draft):
    context = chromium.new_context(base_url=live_server.url, java_script_enabled=False,
                                   viewport={"width": 1366, "height": 900})
    page = context.new_page()
    person("policy_admin", "paula")
    page.goto(f"/login/?next={edit_path(draft)}")
    page.get_by_label("Username").fill("paula")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    rule = page.locator("#rule-0")
    expect(rule.get_by_label("Face value at least")).to_be_hidden()

    add_condition(page, 0, "face_value_min")

    rule = page.locator("#rule-0")
    expect(rule.get_by_label("Face value at least")).to_be_visible()
    expect(page.get_by_role("heading", name="Edit draft v2")).to_be_visible()
    context.close()


def test_the_action_menu_overlaps_nothing_and_compensation_shows_only_when_chosen(
        page, person, draft):
    person("policy_admin", "paula")
    page.set_viewport_size({"width": 1366, "height": 900})
    sign_in(page, "paula", edit_path(draft))
    rule = page.locator("#rule-0")
    action = rule.get_by_label("Action")
    template = rule.get_by_label("Compensate with template")
    expect(template).to_be_hidden()

    action.select_option("COMPENSATE")

    expect(template).to_be_visible()
    assert not boxes_overlap(action, template)
    assert not boxes_overlap(action, rule.get_by_label("or a credit of"))
    assert axe_violations(page) == []


def test_rules_read_as_sentences_the_diff_names_changed_values_and_one_version_is_in_force(
        page, person, template, draft):
    rules = [dict(rule) for rule in draft.rules]
    # A label says the rule's own number of days (the engine refuses "30 days" on a 2-day rule).
    rules[4] = {**rules[4], "label": "Full refund within 2 days of redemption returns the coupon",
                "when": {"refund_type": "FULL", "days_since_redemption_max": 2}}
    rules[0] = {**rules[0], "requires_approval": True}
    policy_draft_update(draft, rules, "user:paula")
    policy_publish(ReturnPolicyVersion.objects.get(pk=draft.pk), "user:paula")
    person("support", "sam")
    sign_in(page, "sam", f"/policies/{draft.policy_id}/versions/1/")

    text = page.locator("ol.rules").inner_text()
    assert ("When the refund is risk-flagged: an operator decides what happens to the "
            "coupon.") in text
    assert "operator approves first" not in text  # said once, not "decides ... approves first"

    page.goto(f"/policies/{draft.policy_id}/diff/?from=1&to=2")
    changed = page.locator("tr.diff-changed")
    expect(changed).to_have_count(2)
    expect(changed.nth(1)).to_contain_text("days since redemption at most: 30 days → 2 days")
    expect(changed.nth(0)).to_contain_text("an operator now approves first")
    expect(page.locator("tr.diff-added, tr.diff-removed")).to_have_count(0)
    assert axe_violations(page) == []

    page.goto(f"/policies/{draft.policy_id}/")
    expect(page.locator("#v2 .badge-in-force")).to_be_visible()
    expect(page.locator("#v1 .badge-in-force")).to_have_count(0)
    expect(page.locator("p.in-force")).to_contain_text(
        "v2 is in force: it decides refunds from now on for coupons of the templates off30.")
    assert axe_violations(page) == []
    switch_to_chinese(page)
    expect(page.locator("#v2 .badge-in-force")).to_have_text("生效中")
    assert axe_violations(page) == []

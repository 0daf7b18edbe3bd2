"""A form answered with errors starts with a summary of them, each linking to its field (the
script moves focus to it: tests/browser/test_error_summary.py)."""

import re

import pytest

from refunds.models import ReturnPolicy
from refunds.services.policies import policy_draft_create
from tests.timeline.queue_helpers import press, text
from tests.timeline.queue_objects import pending_decision
from tests.timeline.test_policy_editor import edit_url, editor_post

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(signed_in):
    return signed_in("policy_admin", "pat")


@pytest.fixture
def draft(clock):
    return policy_draft_create(ReturnPolicy.objects.get(code="default"), "user:pat")

SUMMARY = re.compile(r'<div class="error-summary" role="alert" tabindex="-1" data-error-summary>'
                     r'(.*?)</div>', re.S)


def summary_links(html: str) -> list[tuple[str, str]]:
    [summary] = SUMMARY.findall(html)
    return re.findall(r'<a href="#([^"]+)" data-error-field="[^"]+">([^<]+)</a>', summary)


def test_a_reject_without_a_reason_links_the_summary_to_the_reason(signed_in, coupon):
    decision = pending_decision(coupon)

    answer = press(signed_in("operator"), "decision_reject", decision_id=decision.pk, note="")

    [(field_id, sentence)] = summary_links(text(answer))
    assert field_id == f"rejectform-{decision.pk}-note"
    assert sentence.endswith(": This field is required.")
    assert f'id="{field_id}"' in text(answer)


def test_the_policy_editor_names_each_field_with_its_rule(admin, draft):
    rules = [dict(rule) for rule in draft.rules]
    rules[4] = {**rules[4], "when": {"days_since_redemption_max": "soon"}}

    html = admin.post(edit_url(draft), editor_post(rules)).content.decode()

    [(field_id, sentence)] = summary_links(html)
    assert field_id == "id_form-4-days_since_redemption_max"
    assert sentence.startswith("Rule 5, ") and "whole number of days" in sentence


def test_the_rules_own_problem_is_in_the_summary_without_a_link(admin, draft):
    html = admin.post(edit_url(draft), editor_post([])).content.decode()

    [summary] = SUMMARY.findall(html)
    assert "Rules: must be a non-empty list of rules" in summary and "<a " not in summary


def test_a_page_without_errors_has_no_summary(admin, draft):
    assert "data-error-summary" not in admin.get(edit_url(draft)).content.decode()


def test_a_wrong_password_is_summarised_at_the_top_of_the_sign_in_form(client):
    html = client.post("/login/", {"username": "nobody", "password": "wrong"}).content.decode()

    [summary] = SUMMARY.findall(html)
    assert "There is 1 problem to fix:" in summary

"""The default return policy's name and rule labels read in the reader's language on the
approvals queue and the policy pages; the English label stays what the decision stored."""

import pytest
from django.urls import reverse

from refunds.models import ReturnPolicy
from refunds.services.policies import policy_draft_create
from tests.timeline.queue_objects import fresh_coupon, pending_decision
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

RISK_RULE = "Risk-flagged refunds are reviewed by an operator"


def test_the_approvals_queue_shows_the_rule_in_chinese(template, signed_in):
    decision = pending_decision(fresh_coupon(template))
    url = reverse("console:approvals")

    english = signed_in("operator").get(url).content.decode()
    chinese = signed_in("operator", "operator-2").get(
        url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert decision.rule_label == RISK_RULE
    assert RISK_RULE in english
    assert "有风控标记的退款由运营审批" in chinese and RISK_RULE not in chinese


@pytest.mark.usefixtures("zh")
def test_the_default_policys_page_shows_its_rules_in_chinese(signed_in):
    policy = ReturnPolicy.objects.get(code=ReturnPolicy.DEFAULT_CODE)

    page = signed_in("policy_admin").get(
        reverse("console:policy_version", args=[policy.pk, 1]),
        HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "核销后 30 天内全额退款：退券" in page
    assert "Full refund within 30 days" not in page


@pytest.mark.usefixtures("zh")
def test_the_editor_shows_a_shipped_label_as_its_pair_in_both_languages(signed_in, clock):
    policy = ReturnPolicy.objects.get(code=ReturnPolicy.DEFAULT_CODE)
    draft = policy_draft_create(policy, "user:pat")
    url = reverse("console:policy_version_edit", args=[policy.pk, draft.number])

    page = signed_in("policy_admin").get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    # Saved, the shipped label becomes a pair a Chinese admin can rewrite in Chinese.
    assert ('name="form-4-label" value="Full refund within 30 days of redemption returns the '
            'coupon"') in page
    assert 'name="form-4-label_zh" value="核销后 30 天内全额退款：退券"' in page


@pytest.mark.usefixtures("zh")
def test_the_shipped_policys_name_reads_in_chinese_until_an_admin_renames_it(signed_in):
    policy = ReturnPolicy.objects.get(code=ReturnPolicy.DEFAULT_CODE)
    reader = signed_in("policy_admin")
    pages = [reverse("console:policies"), reverse("console:policy", args=[policy.pk]),
             reverse("console:policy_version", args=[policy.pk, 1])]

    for url in pages:
        page = reader.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
        assert "默认退券规则" in page and "Default return policy" not in page, url

    ReturnPolicy.objects.filter(pk=policy.pk).update(name="Store-wide policy")
    page = reader.get(pages[1], HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "Store-wide policy" in page and "默认退券规则" not in page


def test_a_rule_an_admin_labelled_in_both_languages_reads_in_the_readers_on_the_queue(
        template, signed_in):
    from refunds.services.policies import policy_draft_update, policy_publish

    policy = ReturnPolicy.objects.get(code=ReturnPolicy.DEFAULT_CODE)
    draft = policy_draft_create(policy, "user:pat")
    rules = [dict(rule) for rule in draft.rules]
    risk = next(rule for rule in rules if rule["label"] == RISK_RULE)
    risk.update(label="Flagged refunds go to a person",
                labels={"en": "Flagged refunds go to a person", "zh-hans": "风控退款转人工"})
    policy_publish(policy_draft_update(draft, rules, "user:pat"), "user:pat")
    pending_decision(fresh_coupon(template))
    url = reverse("console:approvals")

    english = signed_in("operator").get(url).content.decode()
    chinese = signed_in("operator", "operator-2").get(
        url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "Flagged refunds go to a person" in english and "风控退款转人工" not in english
    assert "风控退款转人工" in chinese and "Flagged refunds go to a person" not in chinese

"""The approvals queue: refund decisions waiting for an operator, approved or rejected."""

import re

import pytest

from coupons.models import CommandRejection, CouponOperation, IdempotencyRecord
from refunds.models import RefundCoupon, ReturnPolicy
from refunds.services.policies import policy_draft_create, policy_publish
from tests.timeline.queue_helpers import new_key, press, text
from tests.timeline.queue_objects import pending_decision
from tests.timeline.test_coupon_page import codes

pytestmark = pytest.mark.django_db


@pytest.fixture
def decision(coupon):
    return pending_decision(coupon)


def ledger(decision):
    return list(CouponOperation.objects.filter(coupon_id=decision.coupon_id)
                .order_by("to_version").values_list("op_type", flat=True))


def test_approving_with_return_appends_a_return_row_and_answers_it_in_place(
        signed_in, decision):
    client = signed_in("operator")
    key = new_key()

    answer = press(client, "decision_approve", key, decision_id=decision.pk, action="RETURN",
                   note="customer confirmed")

    assert answer.status_code == 200
    decision.refresh_from_db()
    assert (decision.status, decision.executed_action) == ("EXECUTED", "RETURN")
    assert ledger(decision) == ["ISSUE", "LOCK", "REDEEM", "RETURN"]
    returned = CouponOperation.objects.get(coupon_id=decision.coupon_id, op_type="RETURN")
    assert (returned.actor, returned.idempotency_key) == ("user:operator-1", key)
    page = text(answer)
    assert "<html" not in page  # the item's partial, not the page
    assert f'id="decision-{decision.pk}"' in page
    assert f'id="op-{returned.pk}"' in page
    assert "USED → AVAILABLE" in codes(page) and "v4 → v5" not in page and "v3 → v4" in page
    assert 'name="idempotency_key"' not in page  # executed: nothing left to press


def test_a_double_submitted_approval_takes_effect_once_and_answers_the_first_result(
        signed_in, decision):
    client = signed_in("operator")
    key = new_key()

    first = press(client, "decision_approve", key, decision_id=decision.pk, action="RETURN")
    second = press(client, "decision_approve", key, decision_id=decision.pk, action="RETURN")

    assert ledger(decision) == ["ISSUE", "LOCK", "REDEEM", "RETURN"]
    returned = CouponOperation.objects.get(coupon_id=decision.coupon_id, op_type="RETURN")
    assert second.status_code == 200
    assert "Already done" in text(second) and "Already done" not in text(first)
    assert f'id="op-{returned.pk}"' in text(second)


def test_the_same_key_with_another_choice_is_refused_and_changes_nothing(signed_in, decision):
    client = signed_in("operator")
    key = new_key()
    press(client, "decision_approve", key, decision_id=decision.pk, action="RETURN")

    other = press(client, "decision_approve", key, decision_id=decision.pk, action="VOID")

    assert other.status_code == 422
    assert "IDEMPOTENCY_KEY_REUSED" in text(other)
    assert ledger(decision) == ["ISSUE", "LOCK", "REDEEM", "RETURN"]


def test_a_plain_form_post_redirects_to_the_queue_with_the_result(signed_in, decision):
    client = signed_in("operator")

    answer = press(client, "decision_approve", htmx=False, decision_id=decision.pk,
                   action="RETURN")

    assert answer.status_code == 302 and answer["Location"] == "/approvals/"
    page = text(client.get("/approvals/"))
    assert re.search(r"ledger #\d+ RETURN USED → AVAILABLE \(v3 → v4\)", page)


def test_without_javascript_the_action_asks_for_confirmation_first(signed_in, decision):
    client = signed_in("operator")
    key = new_key()

    answer = press(client, "decision_approve", key, htmx=False, confirmed=False,
                   decision_id=decision.pk, action="RETURN")

    assert answer.status_code == 200
    assert "Yes, approve refund decision" in text(answer)
    assert f'value="{key}"' in text(answer)  # confirming sends the same key
    decision.refresh_from_db()
    assert decision.status == "PENDING_APPROVAL"
    assert not IdempotencyRecord.objects.filter(key=key).exists()


def test_a_manual_review_needs_the_operator_to_choose_the_coupons_fate(signed_in, decision):
    client = signed_in("operator")

    answer = press(client, "decision_approve", decision_id=decision.pk, note="ok")

    assert answer.status_code == 200
    assert re.search(r'id="approvedecisionform-\d+-action".*?This field is required',
                     text(answer), re.S)
    decision.refresh_from_db()
    assert decision.status == "PENDING_APPROVAL"
    assert ledger(decision) == ["ISSUE", "LOCK", "REDEEM"]


def test_reject_needs_a_reason_then_leaves_the_coupon_used(signed_in, decision):
    client = signed_in("operator")

    blank = press(client, "decision_reject", decision_id=decision.pk, note="")
    decision.refresh_from_db()
    assert decision.status == "PENDING_APPROVAL"
    assert re.search(r'id="rejectform-\d+-note".*?This field is required', text(blank), re.S)

    rejected = press(client, "decision_reject", decision_id=decision.pk, note="fraud ring")

    decision.refresh_from_db()
    assert (decision.status, decision.review_note) == ("REJECTED", "fraud ring")
    assert ledger(decision) == ["ISSUE", "LOCK", "REDEEM"]
    assert "rejected: the coupon keeps its state" in text(rejected)


def test_a_decision_no_longer_pending_answers_its_error_code_in_the_page(signed_in, decision):
    client = signed_in("operator")
    press(client, "decision_approve", decision_id=decision.pk, action="RETURN")

    late = press(client, "decision_reject", decision_id=decision.pk, note="too late")

    assert late.status_code == 409
    assert late["X-Console-Fragment"] == "1"  # console.js swaps it in beside the form
    assert "INVALID_STATE" in text(late) and "not waiting for this" in text(late)
    assert "<form" not in text(late)  # decided: no buttons left, not even empty ones
    plain = press(client, "decision_reject", htmx=False, decision_id=decision.pk, note="again")
    assert plain.status_code == 409 and "INVALID_STATE" in text(plain)
    assert "<html" in text(plain)


def test_the_queue_shows_the_policy_version_the_rule_and_the_evidence(signed_in, decision):
    page = text(signed_in("operator").get("/approvals/"))

    assert f'id="decision-{decision.pk}"' in page
    assert "<code>default</code> version 1" in page
    assert "Risk-flagged refunds are reviewed by an operator" in page
    assert "risk_flag" in page and "refund_type" in page  # the facts it was decided on
    assert page.count('name="idempotency_key"') == 2  # approve and reject, each its own key


def test_each_rendering_gives_the_form_a_fresh_key(signed_in, decision):
    client = signed_in("operator")
    keys = [re.findall(r'name="idempotency_key" value="([^"]+)"', text(client.get("/approvals/")))
            for _ in range(2)]
    assert len(set(keys[0] + keys[1])) == 4


def test_support_sees_the_queue_but_no_buttons(signed_in, decision):
    page = text(signed_in("support").get("/approvals/"))

    assert f'id="decision-{decision.pk}"' in page
    assert "<form" in page  # sign out only
    assert "/approve" not in page and "/reject" not in page
    assert 'name="idempotency_key"' not in page
    assert 'href="/approvals/"' not in page  # not in their navigation


def test_a_support_post_is_refused_with_the_403_page_and_recorded(signed_in, decision):
    client = signed_in("support")

    answer = press(client, "decision_approve", decision_id=decision.pk, action="RETURN")

    assert answer.status_code == 403
    assert "approve_refunds" in text(answer)
    decision.refresh_from_db()
    assert decision.status == RefundCoupon.Status.PENDING_APPROVAL
    refusal = CommandRejection.objects.get(op_type="CONSOLE")
    assert (refusal.actor, refusal.error_code) == ("support-1", "PERMISSION_DENIED")
    assert refusal.details == {"path": f"/approvals/{decision.pk}/approve", "method": "POST",
                               "capability": "approve_refunds"}


def test_operators_see_the_queue_in_their_navigation(signed_in):
    page = text(signed_in("operator").get("/approvals/"))
    assert 'href="/approvals/" aria-current="page"' in page
    assert "No refund decisions here" in page


@pytest.fixture
def return_needs_approval(db, clock):
    """Version 2 of the default policy: full refunds return the coupon after an approval."""
    from refunds.models import ReturnPolicy

    policy = ReturnPolicy.objects.get(code="default")
    draft = policy_draft_create(policy, "policy-admin", rules=[
        {"label": "Full refunds return the coupon, approved", "when": {"refund_type": "FULL"},
         "action": "RETURN", "requires_approval": True, "compensation": {}},
        {"label": "Otherwise the coupon stays used", "when": {}, "action": "KEEP_USED"},
    ])
    policy_publish(draft, "policy-admin")


def test_a_decision_the_policy_made_is_approved_as_it_is(
        signed_in, coupon, return_needs_approval):
    decided = pending_decision(coupon)
    assert (decided.action, decided.status) == ("RETURN", "PENDING_APPROVAL")
    client = signed_in("operator")
    page = text(client.get("/approvals/"))
    assert "<code>default</code> version 2" in page
    assert "rule 1: Full refunds return the coupon" in page
    assert "What happens to the coupon" not in page  # nothing to choose

    other = press(client, "decision_approve", decision_id=decided.pk, action="VOID")

    assert other.status_code == 400
    assert "VALIDATION_ERROR" in text(other) and "This decision is RETURN." in text(other)
    assert ledger(decided) == ["ISSUE", "LOCK", "REDEEM"]

    press(client, "decision_approve", decision_id=decided.pk, action="")

    assert ledger(decided) == ["ISSUE", "LOCK", "REDEEM", "RETURN"]


def test_a_forged_unprintable_key_is_refused_before_anything_runs(signed_in, decision):
    client = signed_in("operator")

    answer = press(client, "decision_approve", "bad\x07key", decision_id=decision.pk,
                   action="RETURN")

    assert answer.status_code == 200
    assert "printable characters only" in text(answer)
    assert ledger(decision) == ["ISSUE", "LOCK", "REDEEM"]
    assert not IdempotencyRecord.objects.exists()


def test_an_action_without_the_csrf_token_is_refused(make_person, decision):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(make_person("operator"))
    page = text(client.get("/approvals/"))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)

    forged = press(client, "decision_approve", decision_id=decision.pk, action="RETURN")

    assert forged.status_code == 403
    assert ledger(decision) == ["ISSUE", "LOCK", "REDEEM"]
    signed = press(client, "decision_approve", decision_id=decision.pk, action="RETURN",
                   csrfmiddlewaretoken=token)
    assert signed.status_code == 200
    assert ledger(decision) == ["ISSUE", "LOCK", "REDEEM", "RETURN"]


@pytest.mark.parametrize(("role", "entries"), [
    ("operator", ["Cases", "Approvals", "Compensations"]),
    ("support", []),
    ("policy_admin", []),
])
def test_the_queues_show_in_the_navigation_of_operators_only(signed_in, role, entries):
    page = text(signed_in(role).get("/"))
    nav = re.search(r'<nav aria-label="Console">(.*?)</nav>', page, re.S).group(1)
    shown = re.findall(r">(Cases|Approvals|Compensations)</a>", nav)
    assert shown == entries


def test_a_manual_review_preselects_nothing_and_recommends_what_the_policy_would_do(
        signed_in, decision):
    client = signed_in("operator")
    page = text(client.get("/approvals/"))

    select = re.search(r'<select name="action".*?</select>', page, re.S).group(0)
    assert "selected" not in select.replace('value="" selected', "")  # only "Choose…" is
    assert re.search(r'<option value="" selected>Choose…</option>', select)
    assert '<option value="RETURN">give the coupon back (recommended)</option>' in select
    # The sentence names the rule that would decide without the review (default rule 5).
    assert "rule 5 (“Full refund within 30 days of redemption returns the coupon”)" in page
    # Approve and reject are two sections, each with its own heading and form.
    assert re.search(r'<section class="decide-approve".*?<h3[^>]*>Approve</h3>', page, re.S)
    assert re.search(r'<section class="decide-reject".*?<h3[^>]*>Reject</h3>', page, re.S)

    unchosen = press(client, "decision_approve", decision_id=decision.pk, action="")

    assert "This field is required." in text(unchosen)
    assert ledger(decision) == ["ISSUE", "LOCK", "REDEEM"]


def test_a_manual_review_may_be_recommended_the_versions_last_rule(signed_in, coupon):
    """Version 2: risky refunds go to a person; the only rule after that one is the last."""
    default = ReturnPolicy.objects.get(code="default")
    draft = policy_draft_create(default, "policy-admin", rules=[
        {"label": "Risky refunds are reviewed", "when": {"risk_flag": True},
         "action": "MANUAL_REVIEW"},
        {"label": "Otherwise the coupon stays used", "when": {}, "action": "KEEP_USED"},
    ])
    policy_publish(draft, "policy-admin")
    pending_decision(coupon)  # risk-flagged

    page = text(signed_in("operator").get("/approvals/"))

    select = re.search(r'<select name="action".*?</select>', page, re.S).group(0)
    assert '<option value="KEEP_USED">keep the coupon used (recommended)</option>' in select
    assert "rule 2 (“Otherwise the coupon stays used”)" in page


def test_a_rule_that_asks_for_approval_recommends_its_own_action(
        signed_in, coupon, return_needs_approval):
    pending_decision(coupon)

    page = text(signed_in("operator").get("/approvals/"))

    # The action in words with its code in a badge beside it.
    assert ("Rule 1 (“Full refunds return the coupon, approved”) decides give the coupon back "
            "RETURN for this refund and asks an operator to approve it first.") in re.sub(
        r"<[^>]+>", "", page)

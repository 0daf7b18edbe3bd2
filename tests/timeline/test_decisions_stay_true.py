"""A waiting refund decision follows its coupon: read again against the coupon as it is now.

The stored decision (its action, facts and rule, frozen by the database) and what the policy
recommended from them stay as evidence; beside them the page says the coupon moved and offers
only what its current state allows. An approval pressed after the coupon moved is refused
with a sentence (what changed, what to do), never the error's raw details, and changes
nothing. Manual reviews are decided together on one form: a choice per decision, each run
through the same approval service as its own button (tests/browser/test_decisions_stay_true.py
for the pages in a browser).
"""

import uuid

import pytest
from django.urls import reverse

from coupons.errors import InvalidState
from coupons.evidence.tips import journal_tip
from coupons.models import CommandRejection, UserCoupon
from coupons.services import CommandContext
from refunds.models import Compensation, RefundCoupon
from refunds.services import refund_approve
from refunds.services.compensation_decide import compensation_approve
from refunds.services.compensation_propose import compensation_propose
from tests.refunds.conftest import refund
from tests.refunds.test_policy_actions import coupon_under, only
from tests.timeline.queue_helpers import HTMX, new_key, press, text
from tests.timeline.queue_objects import fresh_coupon, pending_decision
from tests.timeline.test_team_lists import bulk
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

MOVED_NOTE = "The coupon moved since this decision was made"
STALE = "The coupon moved since this page was shown"


def reversed_meanwhile(decision):
    """Two operators undo the coupon's REDEEM: the coupon is AVAILABLE again (version 4)."""
    redeem = decision.coupon.operations.get(op_type="REDEEM")
    proposed = compensation_propose(
        coupon_id=decision.coupon_id,
        operation_id=redeem.pk,
        reason="redeemed by mistake",
        ctx=CommandContext(actor="user:alice"),
    )
    compensation_approve(
        compensation_id=proposed.pk,
        note="ok",
        seen_entry=journal_tip(Compensation, proposed.pk),
        ctx=CommandContext(actor="user:bob"),
    )
    return UserCoupon.objects.values_list("status", "state_version").get(pk=decision.coupon_id)


def stored(decision_id):
    return RefundCoupon.objects.values(
        "status", "action", "facts", "rule_index", "executed_action"
    ).get(pk=decision_id)


def approve_form(page: str, decision_id: int) -> str:
    start = page.index(f'action="/approvals/{decision_id}/approve"')
    return page[start : page.index("</form>", start)]


def test_a_reversed_coupon_s_decision_offers_what_its_state_allows_and_keeps_its_evidence(
    signed_in, template
):
    decision = pending_decision(fresh_coupon(template))
    before = stored(decision.pk)
    assert reversed_meanwhile(decision) == ("AVAILABLE", 4)

    page = text(signed_in("operator").get(reverse("console:approvals")))

    assert "Recommended when decided" in page and MOVED_NOTE in page
    assert "it is available" in page and "(version 4)" in page
    form = approve_form(page, decision.pk)
    # Returned twice or "kept used" when it is not: neither is offered; voiding still is.
    assert 'value="RETURN"' not in form and 'value="KEEP_USED"' not in form
    assert 'value="VOID"' in form
    assert stored(decision.pk) == before  # the evidence is read anew, never rewritten


def test_a_decision_on_a_coupon_that_did_not_move_reads_as_before(signed_in, template):
    decision = pending_decision(fresh_coupon(template))

    page = text(signed_in("operator").get(reverse("console:approvals")))

    assert MOVED_NOTE not in page and "Recommended when decided" not in page
    form = approve_form(page, decision.pk)
    assert all(f'value="{a}"' in form for a in ("RETURN", "KEEP_USED", "VOID"))


def test_an_approval_pressed_after_the_coupon_moved_says_so_and_changes_nothing(
    signed_in, template
):
    decision = pending_decision(fresh_coupon(template))
    client = signed_in("operator", "olga")
    shown = journal_tip(RefundCoupon, decision.pk)  # the page was read before the reversal
    before = stored(decision.pk)
    reversed_meanwhile(decision)

    answer = press(
        client,
        "decision_approve",
        decision_id=decision.pk,
        action="RETURN",
        note="",
        seen_entry=shown,
    )

    page = text(answer)
    assert answer.status_code == 409
    assert STALE in page and "choose again or reject it" in page
    assert '<span class="badge"><code>INVALID_STATE</code></span>' in page
    assert "current_state" not in page and "current_version" not in page
    assert stored(decision.pk) == before
    assert UserCoupon.objects.values_list("status", "state_version").get(pk=decision.coupon_id) == (
        "AVAILABLE",
        4,
    )
    refusal = CommandRejection.objects.get(op_type="REFUND_APPROVE")
    assert (refusal.error_code, refusal.actor) == ("INVALID_STATE", "user:olga")


def test_the_stale_approval_reads_in_chinese(signed_in, template, zh):  # noqa: F811
    decision = pending_decision(fresh_coupon(template))
    client = signed_in("operator", "olga")
    shown = journal_tip(RefundCoupon, decision.pk)
    reversed_meanwhile(decision)

    answer = client.post(
        reverse("console:decision_approve", args=[decision.pk]),
        {"idempotency_key": new_key(), "action": "RETURN", "seen_entry": shown, "confirmed": "yes"},
        HTTP_ACCEPT_LANGUAGE="zh-hans",
        **HTMX,
    )

    assert answer.status_code == 409
    assert "券在此页面显示之后已变动" in text(answer) and STALE not in text(answer)


def test_the_service_refuses_keeping_used_a_coupon_no_longer_used(template):
    decision = pending_decision(fresh_coupon(template))
    reversed_meanwhile(decision)

    with pytest.raises(InvalidState) as refused:
        refund_approve(
            decision_id=decision.pk,
            action="KEEP_USED",
            note="",
            seen_entry=journal_tip(RefundCoupon, decision.pk),
            ctx=CommandContext(actor="user:olga"),
        )

    assert refused.value.details["current_state"] == "AVAILABLE"
    assert stored(decision.pk)["status"] == "PENDING_APPROVAL"


def test_bulk_approve_is_not_offered_for_manual_reviews_alone(signed_in, template):
    decisions = [
        pending_decision(fresh_coupon(template, f"u{n}"), order_id=f"order-{n}") for n in range(2)
    ]
    client = signed_in("operator")

    page = text(client.get(reverse("console:approvals")))
    asked = text(
        bulk(client, "decision_bulk", [d.pk for d in decisions], "approve", confirmed=False)
    )

    assert "Approve selected" not in page and "Reject selected" in page
    assert 'href="/approvals/manual-reviews"' in page
    assert "None of these can be done in bulk" in asked and "Yes, Approve" not in asked


def manual_post(client, choices: dict, note="", seen=None, key=None):
    """As the manual reviews form sends it: every listed decision, its version and choice."""
    seen = seen or {pk: journal_tip(RefundCoupon, pk) for pk in choices}
    return client.post(
        reverse("console:decision_manual_bulk"),
        {
            "ids": [str(pk) for pk in choices],
            "note": note,
            "bulk_key": key or str(uuid.uuid4()),
            **{f"seen-{pk}": tip for pk, tip in seen.items()},
            **{f"action-{pk}": action for pk, action in choices.items()},
        },
    )


def test_the_manual_reviews_form_offers_each_decision_what_its_coupon_allows(signed_in, template):
    kept = pending_decision(fresh_coupon(template), order_id="order-1")
    moved = pending_decision(fresh_coupon(template, "u2"), order_id="order-2")
    reversed_meanwhile(moved)

    page = text(signed_in("operator").get(reverse("console:decision_manual_bulk")))

    for decision in (kept, moved):
        assert f'<fieldset class="card manual-item" id="decision-{decision.pk}">' in page
        assert f'name="seen-{decision.pk}" value="{journal_tip(RefundCoupon, decision.pk)}"' in page
        assert f'name="action-{decision.pk}" value="" checked' in page  # leave for later
    for action in ("RETURN", "KEEP_USED", "VOID"):
        assert f'name="action-{kept.pk}" value="{action}"' in page
    assert f'name="action-{moved.pk}" value="VOID"' in page
    assert f'name="action-{moved.pk}" value="RETURN"' not in page
    assert f'name="action-{moved.pk}" value="KEEP_USED"' not in page


def test_the_manual_reviews_form_decides_each_chosen_item_and_leaves_the_rest(signed_in, template):
    returned = pending_decision(fresh_coupon(template), order_id="order-1")
    kept = pending_decision(fresh_coupon(template, "u2"), order_id="order-2")
    later = pending_decision(fresh_coupon(template, "u3"), order_id="order-3")
    client = signed_in("operator", "olga")

    answer = manual_post(
        client,
        {returned.pk: "RETURN", kept.pk: "KEEP_USED", later.pk: ""},
        note="checked the orders",
    )

    page = text(answer)
    assert answer.status_code == 200
    assert "2 items: 2 done, 0 refused. 1 left for later." in page
    assert f"Refund decision #{returned.pk} executed" in page
    assert stored(returned.pk)["executed_action"] == "RETURN"
    assert (stored(kept.pk)["status"], stored(kept.pk)["executed_action"]) == (
        "DECIDED",
        "KEEP_USED",
    )
    assert stored(later.pk)["status"] == "PENDING_APPROVAL"
    assert RefundCoupon.objects.get(pk=returned.pk).reviewed_by == "user:olga"
    assert RefundCoupon.objects.get(pk=kept.pk).review_note == "checked the orders"


def test_the_manual_reviews_form_records_each_refusal_and_runs_the_others(signed_in, template):
    moved = pending_decision(fresh_coupon(template), order_id="order-1")
    changed = pending_decision(fresh_coupon(template, "u2"), order_id="order-2")
    fine = pending_decision(fresh_coupon(template, "u3"), order_id="order-3")
    client = signed_in("operator", "olga")
    seen = {d.pk: journal_tip(RefundCoupon, d.pk) for d in (moved, changed, fine)}
    reversed_meanwhile(moved)  # the coupon moved after the form was shown
    seen[changed.pk] = "0" * 64  # a version the journal never had

    answer = manual_post(
        client, {moved.pk: "RETURN", changed.pk: "VOID", fine.pk: "VOID"}, seen=seen
    )

    page = text(answer)
    assert "3 items: 1 done, 2 refused." in page
    assert STALE in page and "EVIDENCE_CHANGED" in page and "current_state" not in page
    assert stored(moved.pk)["status"] == stored(changed.pk)["status"] == "PENDING_APPROVAL"
    assert stored(fine.pk)["executed_action"] == "VOID"
    assert sorted(
        CommandRejection.objects.filter(op_type="REFUND_APPROVE").values_list(
            "error_code", flat=True
        )
    ) == ["EVIDENCE_CHANGED", "INVALID_STATE"]


def test_the_same_manual_reviews_form_sent_twice_replays_each_item(signed_in, template):
    decision = pending_decision(fresh_coupon(template))
    client = signed_in("operator")
    seen, key = {decision.pk: journal_tip(RefundCoupon, decision.pk)}, str(uuid.uuid4())
    manual_post(client, {decision.pk: "RETURN"}, seen=seen, key=key)

    again = text(manual_post(client, {decision.pk: "RETURN"}, seen=seen, key=key))

    assert "1 item: 1 done, 0 refused." in again
    assert "Already done (this form was sent before)" in again
    assert (
        RefundCoupon.objects.get(pk=decision.pk).coupon.operations.filter(op_type="RETURN").count()
        == 1
    )


def test_a_manual_reviews_form_with_nothing_chosen_decides_nothing(signed_in, template):
    decision = pending_decision(fresh_coupon(template))

    answer = manual_post(signed_in("operator"), {decision.pk: ""})

    assert answer.status_code == 400
    assert "choose what happens to at least one coupon" in text(answer)
    assert stored(decision.pk)["status"] == "PENDING_APPROVAL"


def test_the_manual_reviews_form_reads_in_chinese(signed_in, template, zh):  # noqa: F811
    decision = pending_decision(fresh_coupon(template))
    client = signed_in("operator")

    page = text(client.get(reverse("console:decision_manual_bulk"), HTTP_ACCEPT_LANGUAGE="zh-hans"))

    assert "人工复核" in page and "稍后处理" in page and "Leave for later" not in page
    assert f'id="decision-{decision.pk}"' in page


def test_a_decided_return_waiting_for_approval_is_not_offered_once_the_coupon_moved(
    signed_in, ctx, clock
):
    coupon_under(only("Return after a look", "RETURN", requires_approval=True), ctx)
    [decision] = refund(ctx, "r-1").decisions
    reversed_meanwhile(decision)
    client = signed_in("operator")

    page = text(client.get(reverse("console:approvals")))
    asked = text(bulk(client, "decision_bulk", [decision.pk], "approve", confirmed=False))

    assert MOVED_NOTE in page and f'action="/approvals/{decision.pk}/approve"' not in page
    assert f'action="/approvals/{decision.pk}/reject"' in page  # rejecting still closes it
    assert "Approve selected" not in page
    assert "its state no longer allows it" in asked and "Yes, Approve" not in asked
    assert stored(decision.pk)["status"] == "PENDING_APPROVAL"

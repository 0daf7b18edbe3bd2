"""Goodwill coupons in the console: support proposes one from the coupon page, an operator who
is not the proposer approves it in the Goodwill queue and the coupon is issued."""

import pytest

from coupons.models import CouponOperation, GoodwillProposal, OutboxEvent
from coupons.services.templates import template_set_issuable
from tests.timeline.queue_helpers import new_key, press, text
from timeline.activity import ActivityFilters, activity_page

pytestmark = pytest.mark.django_db


def propose(client, coupon, template, key=None, **fields):
    fields = {"coupon_id": coupon.pk, "template_id": template.pk, "answers": "order-7",
              "reason": "the order arrived cold", **fields}
    return press(client, "goodwill_propose", key, **fields)


def test_support_proposes_from_the_coupon_page_and_another_approves(signed_in, coupon,
                                                                     template):
    client = signed_in("support", "sam")
    page = text(client.get(f"/coupons/{coupon.pk}/"))
    assert f'href="/goodwill/propose?coupon={coupon.pk}"' in page
    form = text(client.get(f"/goodwill/propose?coupon={coupon.pk}"))
    assert f"A goodwill coupon for customer {coupon.user_id}" in form
    assert f'<option value="{template.pk}">' in form

    made = propose(client, coupon, template)

    assert made.status_code == 200, text(made)
    proposal = GoodwillProposal.objects.get()
    assert (proposal.user_id, proposal.coupon_id, proposal.created_by, proposal.status) == (
        coupon.user_id, coupon.pk, "user:sam", "PROPOSED")
    assert f'id="goodwill-{proposal.pk}"' in text(made)
    # Support cannot decide: no buttons, and a forged POST is refused for the capability.
    assert f'action="/goodwill/{proposal.pk}/approve"' not in text(client.get("/goodwill/"))
    assert press(client, "goodwill_approve", goodwill_id=proposal.pk).status_code == 403

    operator = signed_in("operator", "olga")
    queue = text(operator.get("/goodwill/"))
    assert f'action="/goodwill/{proposal.pk}/approve"' in queue
    approved = press(operator, "goodwill_approve", goodwill_id=proposal.pk, note="ok")

    assert approved.status_code == 200, text(approved)
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by) == ("APPROVED", "user:olga")
    issue = CouponOperation.objects.get(coupon=proposal.issued_coupon)
    assert (issue.op_type, issue.actor, proposal.issued_coupon.user_id) == (
        "ISSUE", "user:olga", coupon.user_id)
    assert OutboxEvent.objects.filter(operation=issue).exists()
    assert f'href="/coupons/{proposal.issued_coupon_id}/"' in text(approved)
    said = [entry["what"] for entry in activity_page(filters=ActivityFilters()).entries]
    assert f"Approved goodwill coupon #{proposal.pk}: issued coupon " \
           f"{proposal.issued_coupon_id}" in said
    assert f"Proposed goodwill coupon #{proposal.pk} for customer {coupon.user_id} " \
           "(order-7)" in said


def test_the_proposer_sees_why_there_is_no_button_and_a_forged_post_is_refused(
        signed_in, coupon, template):
    client = signed_in("operator", "olga")
    propose(client, coupon, template)
    proposal = GoodwillProposal.objects.get()

    queue = text(client.get("/goodwill/"))
    assert "You proposed this goodwill coupon" in queue
    assert f'action="/goodwill/{proposal.pk}/approve"' not in queue
    own = press(client, "goodwill_approve", goodwill_id=proposal.pk)

    assert own.status_code == 403
    assert "SAME_OPERATOR" in text(own)
    assert "someone other than its proposer" in text(own)
    proposal.refresh_from_db()
    assert (proposal.status, proposal.issued_coupon_id) == ("PROPOSED", None)


def test_refusals_are_said_beside_the_form(signed_in, coupon, template):
    client = signed_in("support", "sam")
    propose(client, coupon, template)

    again = propose(client, coupon, template, reason="asked again")
    assert again.status_code == 409
    assert "GOODWILL_ALREADY_GIVEN" in text(again)
    assert "already has a goodwill coupon for this order or case" in text(again)

    template_set_issuable(template_id=template.pk, issuable=False)
    closed = propose(client, coupon, template, answers="order-8")
    # A closed campaign is no longer offered: the choice itself is refused.
    assert closed.status_code == 200 and "Select a valid choice" in text(closed)
    assert GoodwillProposal.objects.count() == 1


def test_a_double_submitted_proposal_is_made_once(signed_in, coupon, template):
    client = signed_in("support", "sam")
    key = new_key()

    propose(client, coupon, template, key)
    again = propose(client, coupon, template, key)

    assert again.status_code == 200 and "Already done" in text(again)
    assert GoodwillProposal.objects.count() == 1


def test_a_rejection_needs_a_reason_and_issues_nothing(signed_in, coupon, template):
    propose(signed_in("support", "sam"), coupon, template)
    proposal = GoodwillProposal.objects.get()
    operator = signed_in("operator", "olga")

    blank = press(operator, "goodwill_reject", goodwill_id=proposal.pk, note="")
    assert "This field is required" in text(blank)
    rejected = press(operator, "goodwill_reject", goodwill_id=proposal.pk, note="not our fault")

    assert rejected.status_code == 200
    proposal.refresh_from_db()
    assert (proposal.status, proposal.issued_coupon_id) == ("REJECTED", None)
    assert "not our fault" in text(rejected)


def test_proposed_for_a_customer_by_user_id(signed_in, template):
    client = signed_in("support", "sam")
    assert "Customer (user id)" in text(client.get("/goodwill/propose"))

    missing = press(client, "goodwill_propose", template_id=template.pk, answers="case-3",
                    reason="late")
    assert "Name the customer." in text(missing)
    made = press(client, "goodwill_propose", template_id=template.pk, answers="case-3",
                 reason="late", user_id="u42")

    assert made.status_code == 200
    assert GoodwillProposal.objects.get().user_id == "u42"
    assert client.get("/goodwill/propose?coupon=99999").status_code == 404


def test_the_customer_page_proposes_for_that_customer(signed_in, coupon, template):
    client = signed_in("support", "sam")
    page = text(client.get(f"/customers/{coupon.user_id}/"))
    assert f'href="/goodwill/propose?user={coupon.user_id}"' in page
    form = text(client.get(f"/goodwill/propose?user={coupon.user_id}"))
    assert f'name="user_id" value="{coupon.user_id}"' in form

    made = press(client, "goodwill_propose", template_id=template.pk, answers="order-9",
                 reason="the order arrived cold", user_id=coupon.user_id)

    assert made.status_code == 200, text(made)
    assert (GoodwillProposal.objects.get().user_id, GoodwillProposal.objects.get().coupon_id) \
        == (coupon.user_id, None)
    # Without the capability the page offers no link.
    assert "/goodwill/propose" not in text(signed_in("policy_admin", "pat").get(
        f"/customers/{coupon.user_id}/"))

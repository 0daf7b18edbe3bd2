"""What the Activity page holds besides coupons and queues: a refused refund review made over
the API, a policy admin's visits to the return policy pages, a compensation proposed over the
API (and by whom)."""

import re

import pytest
from django.urls import reverse

from coupons.evidence.tips import journal_tip
from coupons.models import CommandRejection
from refunds.models import Compensation, RefundCoupon, ReturnPolicy
from tests.refunds.conftest import moved_past_the_services
from tests.timeline.queue_helpers import text
from tests.timeline.queue_objects import fresh_coupon, pending_decision, redeemed
from timeline.models import ViewRecord

pytestmark = pytest.mark.django_db


def activity_of(signed_in, person: str) -> str:
    auditor = signed_in("policy_admin", "pat")
    return text(auditor.get(reverse("console:activity"), {"person": person}))


def refused(operation: str, code: str, page: str) -> bool:
    """The page's refusal row: the operation and the error, each a code badge."""
    return re.search(rf">{operation}</abbr></span> refused: <span class=\"code-badge\"><abbr "
                     rf"[^>]*>{code}</abbr>", page) is not None


def test_a_refund_approval_refused_over_the_api_is_on_the_activity_page(signed_in, template):
    decision = pending_decision(fresh_coupon(template))
    shown = journal_tip(RefundCoupon, decision.pk)
    moved_past_the_services(RefundCoupon, decision.pk, "recommended", action="RETURN")
    operator = signed_in("operator", "olga")

    answer = operator.post(f"/api/v1/refunds/{decision.pk}/approve",
                           {"seen_entry": shown, "action": "RETURN"},
                           content_type="application/json", HTTP_IDEMPOTENCY_KEY="a-1")

    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "EVIDENCE_CHANGED"
    assert refused("REFUND_APPROVE", "EVIDENCE_CHANGED", activity_of(signed_in, "olga"))


@pytest.mark.parametrize("verb", ["approve", "reject"])
def test_a_review_refused_for_want_of_the_capability_is_logged(signed_in, template, verb):
    coupon = fresh_coupon(template)
    decision = pending_decision(coupon)
    support = signed_in("support", "sam")

    answer = support.post(f"/api/v1/refunds/{decision.pk}/{verb}",
                          {"seen_entry": journal_tip(RefundCoupon, decision.pk), "note": "no"},
                          content_type="application/json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert answer.status_code == 403
    refusal = CommandRejection.objects.get()
    assert (refusal.op_type, refusal.error_code, refusal.actor, refusal.coupon_id_ref) == (
        f"REFUND_{verb.upper()}", "PERMISSION_DENIED", "user:sam", coupon.pk)
    assert RefundCoupon.objects.get(pk=decision.pk).status == "PENDING_APPROVAL"
    assert refused(f"REFUND_{verb.upper()}", "PERMISSION_DENIED", activity_of(signed_in, "sam"))


def test_a_policy_admins_visits_to_the_policy_pages_are_views(signed_in):
    policy = ReturnPolicy.objects.get(code=ReturnPolicy.DEFAULT_CODE)
    admin = signed_in("policy_admin", "paula")
    pages = [reverse("console:policies"), reverse("console:policy", args=[policy.pk]),
             reverse("console:policy_version", args=[policy.pk, 1]),
             reverse("console:policy_diff", args=[policy.pk])]

    for page in pages:
        assert admin.get(page).status_code == 200, page

    assert list(ViewRecord.objects.order_by("pk").values_list("actor", "page", "path")) == [
        ("user:paula", name, path) for name, path in zip(
            ["policies", "policy", "policy-version", "policy-diff"], pages, strict=True)]
    page = activity_of(signed_in, "paula")
    assert "Opened return policies" in page
    assert "Opened return policy version" in page
    assert "Opened return policy comparison" in page


def test_a_compensation_proposed_over_the_api_is_credited_to_its_proposer(signed_in,
                                                                          template):
    coupon = fresh_coupon(template)
    operation = redeemed(coupon)
    operator = signed_in("operator", "olga")

    answer = operator.post(
        f"/api/v1/coupons/{coupon.pk}/operations/{operation.pk}/compensate",
        {"reason": "redeemed by mistake"}, content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="p-1")

    assert answer.status_code == 201, answer.json()
    proposed = Compensation.objects.get()
    assert proposed.created_by == "user:olga"
    assert re.search(rf"Proposed compensation #{proposed.pk}: undo an operation <span "
                     r"class=\"code-badge\"><abbr [^>]*>REVERSE_OPERATION</abbr>",
                     activity_of(signed_in, "olga"))

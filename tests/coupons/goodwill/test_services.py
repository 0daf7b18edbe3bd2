"""Goodwill coupons through the services: proposed by one person, issued on another's approval
as an ordinary ISSUE (ledger row and outbox event with the approval), refused with a reason."""

from dataclasses import replace

import pytest

from coupons.errors import (
    GoodwillAlreadyGiven,
    GoodwillNotOpen,
    SameOperator,
    TemplateInactive,
    ValidationFailed,
)
from coupons.evidence.tips import journal_tip
from coupons.models import CommandRejection, CouponOperation, GoodwillProposal, OutboxEvent
from coupons.services.goodwill import goodwill_approve, goodwill_propose, goodwill_reject
from coupons.services.templates import template_set_issuable
from tests.coupons.safety.test_evidence_journal import journal_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def support(ctx):
    return replace(ctx, actor="user:sam")


@pytest.fixture
def operator(ctx):
    return replace(ctx, actor="user:olga")


def propose(template, ctx, **given):
    given = {"answers": "order-7", "reason": "the order arrived cold", **given}
    given.setdefault("coupon_id", None)
    if given["coupon_id"] is None:
        given.setdefault("user_id", "u9")
    return goodwill_propose(template_id=template.pk, ctx=ctx, **given)


def approve(proposal, ctx):
    return goodwill_approve(goodwill_id=proposal.pk, ctx=ctx,
                            seen_entry=journal_tip(GoodwillProposal, proposal.pk))


def test_approved_by_another_it_issues_a_coupon_with_its_ledger_row_and_event(
        template, support, operator):
    proposal = propose(template, support)
    assert (proposal.status, proposal.issued_coupon_id) == ("PROPOSED", None)
    assert not CouponOperation.objects.filter(coupon__user_id="u9").exists()

    approved = approve(proposal, operator)

    coupon = approved.issued_coupon
    assert (approved.status, approved.decided_by) == ("APPROVED", "user:olga")
    assert (coupon.user_id, coupon.template_id, coupon.status) == ("u9", template.pk,
                                                                  "AVAILABLE")
    [issue] = coupon.operations.all()
    assert (issue.op_type, issue.actor, issue.reason_code) == ("ISSUE", "user:olga", "goodwill")
    assert issue.reason_params["goodwill"] == proposal.pk
    assert OutboxEvent.objects.filter(operation=issue).exists()
    assert [e.kind for e in journal_of(approved)] == ["proposed", "approved"]


def test_proposed_from_a_coupon_it_is_for_that_coupon_s_owner(template, coupon, support):
    proposal = propose(template, support, coupon_id=coupon.pk)
    assert (proposal.user_id, proposal.coupon_id) == (coupon.user_id, coupon.pk)
    with pytest.raises(ValidationFailed):
        propose(template, support, coupon_id=coupon.pk, user_id="someone-else",
                answers="order-8")


def test_the_proposer_may_not_decide_it(template, support):
    proposal = propose(template, support)
    for decide in (lambda: approve(proposal, support),
                   lambda: goodwill_reject(goodwill_id=proposal.pk, note="no", ctx=support,
                                           seen_entry=journal_tip(GoodwillProposal,
                                                                  proposal.pk))):
        with pytest.raises(SameOperator) as refused:
            decide()
        assert refused.value.code == "SAME_OPERATOR"
    proposal.refresh_from_db()
    assert proposal.status == "PROPOSED"
    assert CommandRejection.objects.filter(op_type="GOODWILL_APPROVE",
                                           error_code="SAME_OPERATOR").exists()


def test_an_inactive_template_is_refused_when_proposed_and_when_approved(
        template, support, operator):
    proposal = propose(template, support)
    template_set_issuable(template_id=template.pk, issuable=False)

    with pytest.raises(TemplateInactive):
        propose(template, support, answers="order-8")
    with pytest.raises(TemplateInactive):
        approve(proposal, operator)
    proposal.refresh_from_db()
    assert (proposal.status, proposal.issued_coupon_id) == ("PROPOSED", None)


def test_one_per_customer_and_case_unless_rejected(template, support, operator):
    first = propose(template, support)
    with pytest.raises(GoodwillAlreadyGiven) as waiting:
        propose(template, support, reason="asked again")
    assert waiting.value.details["goodwill_id"] == first.pk

    goodwill_reject(goodwill_id=first.pk, note="a voucher was sent by mail", ctx=operator,
                    seen_entry=journal_tip(GoodwillProposal, first.pk))
    second = propose(template, support)
    approve(second, operator)
    with pytest.raises(GoodwillAlreadyGiven):
        propose(template, support)
    assert propose(template, support, answers="order-8").status == "PROPOSED"


def test_a_decided_proposal_is_decided_once(template, support, operator):
    proposal = approve(propose(template, support), operator)
    with pytest.raises(GoodwillNotOpen):
        approve(proposal, replace(operator, actor="user:third"))
    assert proposal.issued_coupon.user_id == "u9"
    assert CouponOperation.objects.filter(coupon__user_id="u9").count() == 1


def test_a_rejection_says_why_and_issues_nothing(template, support, operator):
    proposal = propose(template, support)
    with pytest.raises(ValidationFailed):
        goodwill_reject(goodwill_id=proposal.pk, note=" ", ctx=operator,
                        seen_entry=journal_tip(GoodwillProposal, proposal.pk))
    rejected = goodwill_reject(goodwill_id=proposal.pk, note="not our fault", ctx=operator,
                               seen_entry=journal_tip(GoodwillProposal, proposal.pk))
    assert (rejected.status, rejected.issued_coupon_id) == ("REJECTED", None)
    assert [e.kind for e in journal_of(rejected)] == ["proposed", "rejected"]


def test_a_case_and_a_reason_are_required(template, support):
    with pytest.raises(ValidationFailed) as refused:
        propose(template, support, answers=" ", reason="")
    assert set(refused.value.details) == {"answers", "reason"}

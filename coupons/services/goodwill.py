"""Goodwill coupons: support proposes one for a customer's order or case, an operator who is
not the proposer approves (the coupon is issued as an ordinary ISSUE, ledger row and outbox
event in the approval's transaction) or rejects it. Four eyes as compensations
(refunds.services.compensation_decide); the proposal is journaled evidence."""

from contextlib import contextmanager

from django.db import IntegrityError, transaction
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.errors import (
    GoodwillAlreadyGiven,
    GoodwillNotOpen,
    GoodwillSameOperator,
    NotFound,
    TemplateInactive,
    ValidationFailed,
)
from coupons.evidence.journal import require_folds, with_journal
from coupons.evidence.tips import require_tip
from coupons.ledger_reasons import reason
from coupons.models import CouponTemplate, GoodwillProposal, UserCoupon
from coupons.services.issue import issue_from_template
from coupons.write.declared import declared_insert, declared_update
from coupons.write.payloads import iso
from coupons.write.refusals import refusals_recorded

PROPOSE, APPROVE, REJECT = "GOODWILL_PROPOSE", "GOODWILL_APPROVE", "GOODWILL_REJECT"


def goodwill_payload(proposal: GoodwillProposal) -> dict:
    """The answer of every goodwill command and read."""
    return {
        "id": proposal.pk,
        "status": proposal.status,
        "user_id": proposal.user_id,
        "template_id": proposal.template_id,
        "coupon_id": proposal.coupon_id,
        "answers": proposal.answers,
        "reason": proposal.reason,
        "proposed_by": proposal.created_by,
        "proposed_at": iso(proposal.created_at),
        "decided_by": proposal.decided_by,
        "decided_at": iso(proposal.decided_at),
        "decision_note": proposal.decision_note,
        "issued_coupon_id": proposal.issued_coupon_id,
    }


def goodwill_propose(*, template_id, answers: str, reason: str, ctx, user_id: str = "",
                     coupon_id=None) -> GoodwillProposal:
    """Propose a goodwill coupon of `template_id` for the customer (`user_id`, or the owner of
    `coupon_id`, the coupon they called about) and the order or case `answers` names. Nothing
    is issued: another person decides. Refused when the template issues no more coupons or the
    customer already has one for the same order or case (waiting, or approved)."""
    with refusals_recorded(PROPOSE, ctx, coupon_id=coupon_id), transaction.atomic():
        answers, why = answers.strip(), reason.strip()
        missing = {name: gettext("Required.") for name, value in
                   (("answers", answers), ("reason", why)) if not value}
        if missing:
            raise ValidationFailed(_("Name the order or case it answers, and say why."),
                                   **missing)
        user_id = _customer(user_id, coupon_id)
        template = CouponTemplate.objects.filter(pk=template_id).first()
        if template is None:
            raise NotFound(_("No such template."), template_id=template_id)
        if not template.issuable:
            raise TemplateInactive(template_id=template.pk, template=template.code)
        _refuse_second(user_id, answers[:64])
        proposal = GoodwillProposal(
            user_id=user_id, template=template, coupon_id=coupon_id, answers=answers[:64],
            reason=why[:500], created_by=ctx.actor, created_at=clock.now(),
            idempotency_key=ctx.idempotency_key, request_hash=ctx.request_hash,
        )
        try:
            with transaction.atomic():
                declared_insert(proposal, kind="proposed", actor=ctx.actor)
        except IntegrityError:  # a concurrent twin for the same case committed first
            _refuse_second(user_id, answers[:64])
            raise
        return proposal


def _customer(user_id: str, coupon_id) -> str:
    """The customer: the coupon's owner when proposed from a coupon (a user id sent with it
    must be the same), else the user id sent."""
    if coupon_id is not None:
        owner = UserCoupon.objects.filter(pk=coupon_id).values_list("user_id", flat=True).first()
        if owner is None:
            raise NotFound(_("No such coupon."), coupon_id=coupon_id)
        if user_id and user_id != owner:
            raise ValidationFailed(_("The coupon belongs to another customer."),
                                   user_id=gettext("Not the coupon's owner."))
        return owner
    if not user_id.strip():
        raise ValidationFailed(_("Name the customer."), user_id=gettext("Required."))
    return user_id.strip()[:64]


def _refuse_second(user_id: str, answers: str) -> None:
    given = (GoodwillProposal.objects.filter(user_id=user_id, answers=answers)
             .exclude(status=GoodwillProposal.Status.REJECTED).first())
    if given is not None:
        raise GoodwillAlreadyGiven(goodwill_id=given.pk, current_state=given.status,
                                   answers=answers)


def goodwill_approve(*, goodwill_id, seen_entry: str, note: str = "", ctx) -> GoodwillProposal:
    """Another person approves: the coupon is issued from the template's current terms (an
    ISSUE ledger row naming the proposal, and its outbox event) and the proposal names it, in
    one transaction. `seen_entry` is the hash of the proposal's newest journal entry the
    approver saw."""
    with _deciding(goodwill_id, seen_entry, APPROVE, ctx) as (proposal, now):
        if not CouponTemplate.objects.filter(pk=proposal.template_id, issuable=True).exists():
            raise TemplateInactive(template_id=proposal.template_id, goodwill_id=proposal.pk)
        coupon = issue_from_template(
            template_id=proposal.template_id, user_id=proposal.user_id, ctx=ctx, now=now,
            why=lambda terms: reason("goodwill", goodwill=proposal.pk,
                                     answers=proposal.answers, terms=str(terms)))
        return _decided(proposal, GoodwillProposal.Status.APPROVED, note, ctx, now,
                        issued_coupon=coupon)


def goodwill_reject(*, goodwill_id, seen_entry: str, note: str, ctx) -> GoodwillProposal:
    """Another person rejects, saying why: nothing is issued, the proposal stays on record
    and the customer may be proposed one again for the same case."""
    with _deciding(goodwill_id, seen_entry, REJECT, ctx) as (proposal, now):
        if not note.strip():
            raise ValidationFailed(_("Say why it is rejected."),
                                   note=gettext("Required to reject."))
        return _decided(proposal, GoodwillProposal.Status.REJECTED, note, ctx, now)


@contextmanager
def _deciding(goodwill_id, seen_entry: str, op_type: str, ctx):
    """Lock the proposal; check that it is what its journal says was proposed, that it is
    still open, that it is the version the decider saw and that the decider is not its
    proposer. A refusal rolls back and is recorded with the decider."""
    coupon_id = (GoodwillProposal.objects.filter(pk=goodwill_id)
                 .values_list("coupon_id", flat=True).first())
    with refusals_recorded(op_type, ctx, coupon_id=coupon_id), transaction.atomic():
        proposal = (with_journal(GoodwillProposal.objects.select_for_update())
                    .filter(pk=goodwill_id).first())
        if proposal is None:
            raise NotFound(_("No such goodwill coupon."), goodwill_id=goodwill_id)
        # First: a customer, template or proposer changed past the services is never decided
        # on, and four eyes are checked against the proposer the journal names.
        require_folds(proposal)
        if proposal.status != GoodwillProposal.Status.PROPOSED:
            raise GoodwillNotOpen(current_state=proposal.status, goodwill_id=proposal.pk,
                                  decided_by=proposal.decided_by)
        require_tip(proposal, seen_entry)
        if proposal.created_by == ctx.actor:
            # Four eyes: the proposer never decides, whatever capabilities they hold.
            raise GoodwillSameOperator(goodwill_id=proposal.pk, proposed_by=proposal.created_by)
        yield proposal, clock.now()


def _decided(proposal, status, note, ctx, now, *, issued_coupon=None):
    # Its entry names the proposal's entry as its parent (the row lock keeps it the tip).
    declared_update(
        proposal, where={"status": GoodwillProposal.Status.PROPOSED},
        changes={"status": status, "decided_by": ctx.actor, "decided_at": now,
                 "decision_note": note.strip()[:1000], "issued_coupon": issued_coupon},
        step="approved" if status == GoodwillProposal.Status.APPROVED else "rejected",
        actor=ctx.actor,
    )
    return proposal

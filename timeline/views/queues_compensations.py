"""Compensation proposals: an operator proposes for one ledger operation, another decides."""

from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from coupons.capabilities import Capability
from coupons.effects import Plan
from coupons.errors import NotFound
from coupons.identity import actor_of, can_see_details
from refunds.models import Compensation
from refunds.services.compensation_decide import (
    approval_plan,
    compensation_approve,
    compensation_reject,
)
from refunds.services.compensation_payloads import compensation_payload
from refunds.services.compensation_propose import compensation_propose
from timeline.effects import plan_html
from timeline.queue_forms import ApproveCompensationForm, ProposeCompensationForm, RejectForm
from timeline.queue_selectors import (
    COMPENSATION_FILTERS,
    compensation_get,
    compensation_queue,
    compensation_row,
    proposal_row,
)
from timeline.views.access import ConsolePage
from timeline.views.queue_actions import Outcome, QueueAction
from timeline.views.queues_common import queue_page

ROW_TEMPLATE = "timeline/queues/_compensation.html"
PROPOSE_TEMPLATE = "timeline/queues/_propose.html"
# How the result sentence names a compensation's status (the badge beside it keeps the code).
STATUS_WORDS = {Compensation.Status.APPROVED: pgettext_lazy("compensation", "approved"),
                Compensation.Status.REJECTED: pgettext_lazy("compensation", "rejected")}


def compensation_item(request, compensation, **submitted) -> dict:
    """`submitted` is the form just sent back (errors, fresh key); buttons only while open,
    and never to its proposer: four eyes, so the page says why instead of offering a button
    the service would refuse (SAME_OPERATOR)."""
    forms, effects = {}, {}
    waiting = compensation.status == Compensation.Status.PROPOSED
    own = compensation.created_by == actor_of(request.user)
    if waiting and not own and request.user.has_perm(Capability.APPROVE_COMPENSATION.perm):
        forms = {"approve": ApproveCompensationForm(record=compensation),
                 "reject": RejectForm(record=compensation), **submitted}
        # What each button writes, from the plan the approval executes.
        effects = {"approve": plan_html(approval_plan(compensation, compensation.coupon)),
                   "reject": plan_html(Plan(state=compensation.coupon.status))}
    return {
        "compensation": compensation_row(compensation,
                                         can_see_details=can_see_details(request.user)),
        "forms": forms,
        "effects": effects,
        "proposed_by_viewer": waiting and own,
    }


def propose_item(request, proposal=None, *, row=None, **forms) -> dict:
    """The proposal form for one ledger row (`row`, from the link's `?operation=`), prefilled
    from it: a reversal when the row can be reversed, else its amount to pay."""
    if row is not None and "propose" not in forms:
        forms["propose"] = ProposeCompensationForm(record=row, initial={
            "operation_id": row.operation.pk, "amount": row.amount,
            "remedy": ProposeCompensationForm.REVERSE if row.reversible
            else ProposeCompensationForm.PAY})
    made = proposal and compensation_item(request, proposal)
    return {"forms": forms, "row": row, "made": made}


class CompensationQueue(ConsolePage):
    audit_page = "compensations"

    def get(self, request):
        context = queue_page(request, filters=COMPENSATION_FILTERS, default="proposed",
                             select=compensation_queue, make_item=compensation_item)
        return render(request, "timeline/queues/compensations.html", {
            **context, "row_template": ROW_TEMPLATE})


class CompensationPropose(QueueAction):
    """GET `?operation=N`: the form for that ledger row (the coupon page's row button links
    here). A link to no row answers NOT_FOUND alone, with no form to fill in."""

    capabilities = {"GET": Capability.PROPOSE_COMPENSATION,
                    "POST": Capability.PROPOSE_COMPENSATION}
    form_class = ProposeCompensationForm
    form_slot = "propose"
    row_template = PROPOSE_TEMPLATE
    list_url_name = "console:compensations"
    verb = gettext_lazy("Propose a compensation")

    def get(self, request):
        asked = request.GET.get("operation")
        row = proposal_row(operation_id=asked)
        if asked is None or row is not None:
            return self.answer(request, propose_item(request, row=row))
        missing = NotFound(_("No such ledger operation."), operation_id=asked)
        outcome = Outcome(status=missing.http_status, body=missing.as_body())
        return self.answer(request, propose_item(request), outcome, status=outcome.status)

    def load(self):
        return proposal_row(operation_id=self.request.POST.get("operation_id"))

    def after(self, outcome, **kwargs):
        if outcome.error:
            return self.load()
        return compensation_get(compensation_id=outcome.body["id"])

    def execute(self, ctx, data, row):
        if row is None:
            raise NotFound(_("No such ledger operation."), operation_id=data["operation_id"])
        return compensation_payload(compensation_propose(
            coupon_id=row.operation.coupon_id, operation_id=row.operation.pk,
            reason=data["reason"], amount=data["amount"], ctx=ctx))

    def item(self, request, record, **forms):
        if isinstance(record, Compensation):  # made: the row it was made for, form spent
            return propose_item(request, record, row=None)
        return propose_item(request, row=record, **forms)

    def coupon_id_of(self, proposal):
        return proposal.coupon_id

    def summary(self, proposal):
        return _("Compensation #%(id)s proposed (%(kind)s); another operator approves or "
                 "rejects it.") % {"id": proposal.pk, "kind": proposal.kind}


class CompensationAction(QueueAction):
    capabilities = {"POST": Capability.APPROVE_COMPENSATION}
    row_template = ROW_TEMPLATE
    list_url_name = "console:compensations"

    def load(self, compensation_id):
        return compensation_get(compensation_id=compensation_id)

    def item(self, request, compensation, **forms):
        return compensation_item(request, compensation, **forms)

    def summary(self, compensation):
        return _("Compensation #%(id)s %(status)s.") % {
            "id": compensation.pk,
            "status": STATUS_WORDS.get(compensation.status, compensation.status.lower())}


class CompensationApprove(CompensationAction):
    form_class = ApproveCompensationForm
    form_slot = "approve"
    verb = gettext_lazy("Approve compensation")

    def execute(self, ctx, data, compensation):
        return compensation_payload(compensation_approve(
            compensation_id=compensation.pk, seen_entry=data["seen_entry"], note=data["note"],
            ctx=ctx))


class CompensationReject(CompensationAction):
    form_class = RejectForm
    form_slot = "reject"
    verb = gettext_lazy("Reject compensation")

    def execute(self, ctx, data, compensation):
        return compensation_payload(compensation_reject(
            compensation_id=compensation.pk, seen_entry=data["seen_entry"], note=data["note"],
            ctx=ctx))

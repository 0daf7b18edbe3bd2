"""Refund decisions waiting for an operator: approve (it executes) or reject with a reason."""

from django.shortcuts import render
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from coupons.capabilities import Capability
from coupons.effects import Plan
from coupons.errors import InvalidState
from refunds.models import RefundCoupon
from refunds.recommendation import decision_now
from refunds.selectors import decision_payload
from refunds.services import refund_approve, refund_reject
from refunds.services.refund_execute import execution_plan
from timeline.answers import ACTIONS
from timeline.effects import plan_html
from timeline.glossary import state_words, worded
from timeline.queue_forms import ApproveDecisionForm, RejectForm
from timeline.queue_selectors import APPROVAL_FILTERS, approval_queue, decision_get
from timeline.views.access import ConsolePage
from timeline.views.queue_actions import QueueAction
from timeline.views.queues_common import queue_page

ROW_TEMPLATE = "timeline/queues/_decision.html"
# How the result sentence names a decision's status (the badge beside it keeps the code).
STATUS_WORDS = {RefundCoupon.Status.EXECUTED: pgettext_lazy("refund decision", "executed"),
                RefundCoupon.Status.DECIDED: pgettext_lazy("refund decision", "decided")}


def decision_item(request, decision, **submitted) -> dict:
    """`submitted` is the form just sent back (errors, fresh key); buttons only while pending,
    Approve only while the coupon's current state allows something to approve."""
    forms, effects = {}, {}
    waiting = decision.status == RefundCoupon.Status.PENDING_APPROVAL
    now = decision_now(decision, decision.coupon) if waiting else None
    if waiting and request.user.has_perm(Capability.APPROVE_REFUNDS.perm):
        forms = {"reject": RejectForm(record=decision)}
        if now.options:
            forms["approve"] = ApproveDecisionForm(record=decision)
        forms.update(submitted)
        effects = decision_effects(decision, now.options)
    return {"decision": decision, "forms": forms, "effects": effects,
            "recommendation": now.stored if now else None, "now": now,
            "manual": decision.action == RefundCoupon.Action.MANUAL_REVIEW}


def decision_effects(decision, options) -> dict:
    """What each button writes, from the plan the approval executes: for a manual review one
    sentence per action the coupon's state allows now."""
    coupon = decision.coupon
    if decision.action == RefundCoupon.Action.MANUAL_REVIEW:
        approve = {action: plan_html(execution_plan(decision, action, coupon))
                   for action in options}
    else:
        approve = plan_html(execution_plan(decision, decision.action, coupon))
    return {"approve": approve, "reject": plan_html(Plan(state=coupon.status))}


def refusal_words(error: dict) -> str:
    """A refusal because the coupon moved since the page, as a sentence in the reader's words
    (what it is now, what to do); "" for any other refusal, which says its own message."""
    details = error.get("details") or {}
    if error.get("code") != InvalidState.code or "current_version" not in details:
        return ""
    return format_html(
        _("The coupon moved since this page was shown: it is {state} now (version {version}), "
          "so {action} can no longer be done. Nothing was changed. The decision is shown "
          "again below with what the coupon's state allows now; choose again or reject it."),
        state=state_words(details["current_state"]), version=details["current_version"],
        action=worded(details.get("action") or details.get("operation", ""), ACTIONS))


class ApprovalQueue(ConsolePage):
    audit_page = "approvals"

    def get(self, request):
        context = queue_page(request, filters=APPROVAL_FILTERS, default="pending",
                             select=approval_queue, make_item=decision_item)
        items = [item for item in context["items"] if item["forms"]]
        # Bulk approve is offered only for what it can do: a decided action the coupon's
        # state still allows; manual reviews are decided on their own bulk form.
        return render(request, "timeline/queues/approvals.html", {
            **context, "row_template": ROW_TEMPLATE,
            "bulk_approvable": any("approve" in item["forms"] and not item["manual"]
                                   for item in items),
            "manual_waiting": sum(item["manual"] for item in items)})


class DecisionAction(QueueAction):
    capabilities = {"POST": Capability.APPROVE_REFUNDS}
    row_template = ROW_TEMPLATE
    list_url_name = "console:approvals"

    def load(self, decision_id):
        return decision_get(decision_id=decision_id)

    def item(self, request, decision, **forms):
        return decision_item(request, decision, **forms)

    def refusal_words(self, error):
        return refusal_words(error)

    def summary(self, decision):
        done = decision.executed_action or decision.action
        if decision.status == RefundCoupon.Status.REJECTED:
            return _("Refund decision #%(id)s rejected: the coupon keeps its state.") % {
                "id": decision.pk}
        return _("Refund decision #%(id)s %(status)s: %(action)s.") % {
            "id": decision.pk,
            "status": STATUS_WORDS.get(decision.status, decision.status.lower()), "action": done}


class DecisionApprove(DecisionAction):
    form_class = ApproveDecisionForm
    form_slot = "approve"
    verb = gettext_lazy("Approve refund decision")

    def execute(self, ctx, data, decision):
        return decision_payload(refund_approve(
            decision_id=decision.pk, seen_entry=data["seen_entry"], note=data["note"],
            action=data["action"] or None, ctx=ctx))


class DecisionReject(DecisionAction):
    form_class = RejectForm
    form_slot = "reject"
    verb = gettext_lazy("Reject refund decision")

    def execute(self, ctx, data, decision):
        return decision_payload(refund_reject(decision_id=decision.pk,
                                              seen_entry=data["seen_entry"], note=data["note"],
                                              ctx=ctx))

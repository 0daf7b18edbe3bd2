"""Goodwill coupons: support proposes one from a coupon's page, an operator who is not the
proposer approves (the coupon is issued) or rejects it, as compensations are decided."""

from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from coupons.capabilities import Capability
from coupons.errors import NotFound
from coupons.identity import actor_of
from coupons.models import GoodwillProposal
from coupons.services.goodwill import (
    goodwill_approve,
    goodwill_payload,
    goodwill_propose,
    goodwill_reject,
)
from timeline.queue_forms import ApproveGoodwillForm, ProposeGoodwillForm, RejectForm
from timeline.queue_selectors import (
    GOODWILL_FILTERS,
    goodwill_coupon,
    goodwill_get,
    goodwill_queue,
)
from timeline.views.access import ConsolePage
from timeline.views.queue_actions import Outcome, QueueAction
from timeline.views.queues_common import queue_page

ROW_TEMPLATE = "timeline/queues/_goodwill.html"
PROPOSE_TEMPLATE = "timeline/queues/_goodwill_propose.html"
STATUS_WORDS = {GoodwillProposal.Status.APPROVED: pgettext_lazy("goodwill", "approved"),
                GoodwillProposal.Status.REJECTED: pgettext_lazy("goodwill", "rejected")}


def goodwill_item(request, proposal, **submitted) -> dict:
    """Buttons only while it waits, and never to its proposer (four eyes): the page says why
    instead of offering a button the service would refuse (SAME_OPERATOR)."""
    forms = {}
    waiting = proposal.status == GoodwillProposal.Status.PROPOSED
    own = proposal.created_by == actor_of(request.user)
    if waiting and not own and request.user.has_perm(Capability.APPROVE_GOODWILL.perm):
        forms = {"approve": ApproveGoodwillForm(record=proposal),
                 "reject": RejectForm(record=proposal), **submitted}
    return {"proposal": proposal, "forms": forms, "proposed_by_viewer": waiting and own}


def propose_item(request, coupon=None, *, made=None, user_id=None, **forms) -> dict:
    """The proposal form, for the coupon the customer called about (`?coupon=`) or for a
    customer named by user id (`?user=`, the customer page's link fills it in); once made, the
    proposal in its place."""
    if made is None and "propose" not in forms:
        forms["propose"] = ProposeGoodwillForm(record=coupon, initial={"user_id": user_id})
    return {"forms": forms, "coupon": coupon,
            "made": made and goodwill_item(request, made)}


class GoodwillQueue(ConsolePage):
    audit_page = "goodwill"

    def get(self, request):
        context = queue_page(request, filters=GOODWILL_FILTERS, default="proposed",
                             select=goodwill_queue, make_item=goodwill_item)
        return render(request, "timeline/queues/goodwill.html", {
            **context, "row_template": ROW_TEMPLATE})


class GoodwillPropose(QueueAction):
    """GET `?coupon=N`: the form for that coupon's owner (the coupon page links here); with no
    coupon, for a customer named by user id, filled in from `?user=` (the customer page's
    link). A link to no coupon answers NOT_FOUND alone."""

    capabilities = {"GET": Capability.PROPOSE_GOODWILL, "POST": Capability.PROPOSE_GOODWILL}
    form_class = ProposeGoodwillForm
    form_slot = "propose"
    row_template = PROPOSE_TEMPLATE
    list_url_name = "console:goodwill"
    verb = gettext_lazy("Propose a goodwill coupon")

    def get(self, request):
        asked = request.GET.get("coupon")
        coupon = goodwill_coupon(coupon_id=asked)
        if asked is None or coupon is not None:
            return self.answer(request, propose_item(
                request, coupon, user_id=None if coupon else request.GET.get("user")))
        missing = NotFound(_("No such coupon."), coupon_id=asked)
        outcome = Outcome(status=missing.http_status, body=missing.as_body())
        return self.answer(request, {"forms": {}}, outcome, status=outcome.status)

    def load(self):
        return goodwill_coupon(coupon_id=self.request.POST.get("coupon_id"))

    def after(self, outcome, **kwargs):
        if outcome.error:
            return self.load()
        return goodwill_get(goodwill_id=outcome.body["id"])

    def execute(self, ctx, data, coupon):
        return goodwill_payload(goodwill_propose(
            template_id=data["template_id"], user_id=(data["user_id"] or "").strip(),
            coupon_id=data["coupon_id"], answers=data["answers"], reason=data["reason"],
            ctx=ctx))

    def item(self, request, record, **forms):
        if isinstance(record, GoodwillProposal):  # made: the form is spent
            return propose_item(request, made=record)
        return propose_item(request, record, **forms)

    def coupon_id_of(self, proposal):
        return proposal.coupon_id

    def summary(self, proposal):
        return _("Goodwill coupon #%(id)s proposed for customer %(user_id)s; an operator "
                 "approves or rejects it.") % {"id": proposal.pk, "user_id": proposal.user_id}


class GoodwillAction(QueueAction):
    capabilities = {"POST": Capability.APPROVE_GOODWILL}
    row_template = ROW_TEMPLATE
    list_url_name = "console:goodwill"

    def load(self, goodwill_id):
        return goodwill_get(goodwill_id=goodwill_id)

    def item(self, request, proposal, **forms):
        return goodwill_item(request, proposal, **forms)

    def coupon_id_of(self, proposal):
        return proposal.issued_coupon_id

    def summary(self, proposal):
        return _("Goodwill coupon #%(id)s %(status)s.") % {
            "id": proposal.pk,
            "status": STATUS_WORDS.get(proposal.status, proposal.status.lower())}


class GoodwillApprove(GoodwillAction):
    form_class = ApproveGoodwillForm
    form_slot = "approve"
    verb = gettext_lazy("Approve the goodwill coupon")

    def execute(self, ctx, data, proposal):
        return goodwill_payload(goodwill_approve(
            goodwill_id=proposal.pk, seen_entry=data["seen_entry"], note=data["note"], ctx=ctx))


class GoodwillReject(GoodwillAction):
    form_class = RejectForm
    form_slot = "reject"
    verb = gettext_lazy("Reject the goodwill coupon")

    def execute(self, ctx, data, proposal):
        return goodwill_payload(goodwill_reject(
            goodwill_id=proposal.pk, seen_entry=data["seen_entry"], note=data["note"], ctx=ctx))

"""The conflict-case queue: open cases first; resolve with the recommendation or by hand."""

from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from coupons.capabilities import Capability
from coupons.identity import can_see_details
from coupons.models import CaseStatus, Recommendation
from coupons.services.cases import case_resolve, resolution_plan
from refunds.models import Compensation
from timeline.effects import plan_html
from timeline.queue_forms import CaseResolveForm
from timeline.queue_selectors import CASE_FILTERS, case_get, case_queue, case_row
from timeline.templatetags.console import money
from timeline.views.access import ConsolePage
from timeline.views.queue_actions import QueueAction
from timeline.views.queues_common import queue_page

ROW_TEMPLATE = "timeline/queues/_case.html"
# How the result sentence names a case's status (the badge beside it keeps the code).
STATUS_WORDS = {CaseStatus.RESOLVED: pgettext_lazy("case", "resolved"),
                CaseStatus.DISMISSED: pgettext_lazy("case", "dismissed")}


def case_item(request, case, **submitted) -> dict:
    """`submitted` is the form just sent back (errors, fresh key); buttons only while open."""
    forms, effects = {}, {}
    if case.status == CaseStatus.OPEN and request.user.has_perm(Capability.RESOLVE_CASES.perm):
        forms = {"resolve": CaseResolveForm(record=case), **submitted}
        effects = case_effects(case, forms["resolve"])
    return {"case": case_row(case, can_see_details=can_see_details(request.user)),
            "forms": forms, "effects": effects}


def case_effects(case, form) -> list:
    """(choice, what it writes) for each choice of the form, from the plan case_resolve
    executes."""
    return [(label, plan_html(resolution_plan(case, action)))
            for action, label in form.fields["action"].choices if action]


def opened_compensation(case) -> Compensation | None:
    """The compensation a resolution that refunds the order's discount opened."""
    return (Compensation.objects.filter(coupon_id=case.coupon_id, order_id=case.order_id,
                                        kind=Compensation.Kind.ORDER_DISCOUNT_REFUND)
            .order_by("-id").first())


class CaseQueue(ConsolePage):
    audit_page = "cases"

    def get(self, request):
        context = queue_page(request, filters=CASE_FILTERS, default="open", select=case_queue,
                             make_item=case_item)
        return render(request, "timeline/queues/cases.html",
                      {**context, "row_template": ROW_TEMPLATE})


class CaseResolve(QueueAction):
    capabilities = {"POST": Capability.RESOLVE_CASES}
    form_class = CaseResolveForm
    form_slot = "resolve"
    row_template = ROW_TEMPLATE
    list_url_name = "console:cases"
    verb = gettext_lazy("Resolve conflict case")

    def load(self, case_id):
        return case_get(case_id=case_id)

    def execute(self, ctx, data, case):
        case = case_resolve(case_id=case.pk, action=data["action"], note=data["note"], ctx=ctx)
        return {"id": case.pk, "status": case.status, "resolution": case.resolution}

    def item(self, request, case, **forms):
        return case_item(request, case, **forms)

    def summary(self, case):
        # The resolution is a code, quoted as the API answers it.
        said = _("Case #%(id)s %(status)s: %(resolution)s.") % {
            "id": case.pk, "status": STATUS_WORDS.get(case.status, case.status.lower()),
            "resolution": case.resolution}
        if case.resolution == Recommendation.ORDER_DISCOUNT_REFUND:
            opened = opened_compensation(case)
            said += " " + _("Compensation #%(id)s (%(amount)s) is open: a second operator "
                            "approves or rejects it in Compensations.") % {
                "id": opened.pk, "amount": money(opened.amount)}
        return said

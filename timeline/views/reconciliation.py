"""Reconciliation findings for operators: open ones worst first, and what to do about each."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from coupons.capabilities import Capability
from coupons.errors import CouponError
from coupons.models import FindingStatus
from coupons.services import CommandContext
from operations.reconcile import finding_apply, finding_dismiss
from operations.selectors import finding_list, finding_open_counts, reconciliation_last_run
from timeline.views.access import ConsolePage

PER_PAGE = 50


class ReconciliationPage(ConsolePage):
    """Support reads it (READ), as the other queues; only operators see its buttons."""

    def get(self, request):
        open_findings = finding_list().filter(status=FindingStatus.OPEN).select_related("coupon")
        page = Paginator(open_findings, PER_PAGE).get_page(request.GET.get("page"))
        return render(request, "timeline/reconciliation.html", {
            "page": page, "last_run": reconciliation_last_run(),
            "counts": finding_open_counts().items(),
            "can_resolve": request.user.has_perm(Capability.RESOLVE_CASES.perm),
        })


class FindingResolve(ConsolePage):
    """Apply the proposed repair or dismiss with a reason; the answer is a message above the
    list (PRG), so a reload never repeats the action."""

    capabilities = {"POST": Capability.RESOLVE_CASES}

    def post(self, request, finding_id: int):
        ctx = CommandContext(actor=request.user.get_username())
        action = request.POST.get("action", "")
        try:
            if action == "APPLY":
                finding = finding_apply(finding_id=finding_id, ctx=ctx)
            elif action == "DISMISS":
                finding = finding_dismiss(finding_id=finding_id,
                                          note=request.POST.get("note", ""), ctx=ctx)
            else:
                messages.error(request, _("Choose Apply or Dismiss."))
                return redirect("console:reconciliation")
        except CouponError as error:
            messages.error(request, _("Finding %(id)s: %(message)s (%(code)s)") % {
                "id": finding_id, "message": error.message, "code": error.code})
            return redirect("console:reconciliation")
        if finding.status == FindingStatus.CLOSED:
            messages.info(request, _("Finding %(id)s no longer holds: closed, nothing run.")
                          % {"id": finding_id})
        elif finding.resolution == "APPLIED":
            messages.success(request, _("Finding %(id)s applied: %(repair)s.") % {
                "id": finding_id, "repair": finding.get_repair_display()})
        else:
            messages.success(request, _("Finding %(id)s dismissed.") % {"id": finding_id})
        return redirect("console:reconciliation")

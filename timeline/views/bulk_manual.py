"""Manual reviews decided together: one page, a choice per decision, one submit.

A manual review waits for an operator to choose what happens to its coupon, which the
one-reason bulk form cannot do. Here each waiting decision is a fieldset offering only what
its coupon's current state allows (and "leave for later", chosen until the operator picks);
the page sends every choice at once. Each chosen item then runs exactly as its own Approve
button does (timeline.views.bulk.run_item_form): its form for that record, the version the
page showed (`seen-<id>`), a key of its own derived from the page's key, the same service,
whose refusals are recorded and shown beside the item without stopping the others.
"""

import uuid

from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from coupons.capabilities import Capability
from refunds.recommendation import decision_now
from refunds.services.refund_execute import execution_plan
from timeline.effects import plan_html
from timeline.queue_selectors import decision_get, manual_review_queue
from timeline.views.access import ConsolePage
from timeline.views.bulk import BULK_KEYS, BULK_MAX, BulkForm, ItemResult, run_item_form
from timeline.views.queues_approvals import DecisionApprove

TITLE = gettext_lazy("Manual reviews: decide several on one page")


def manual_item(decision) -> dict:
    now = decision_now(decision, decision.coupon)
    return {
        "decision": decision,
        "now": now,
        "options": [
            {
                "code": action,
                "recommended": action == now.action,
                "effect": plan_html(execution_plan(decision, action, decision.coupon)),
            }
            for action in now.options
        ],
    }


class ManualReviewBulk(ConsolePage):
    capabilities = {"GET": Capability.APPROVE_REFUNDS, "POST": Capability.APPROVE_REFUNDS}
    audit_page = "approvals"

    def get(self, request):
        return self.page(request)

    def page(self, request, problem="", status=200):
        items = [manual_item(d) for d in manual_review_queue(limit=BULK_MAX)]
        return render(
            request,
            "timeline/queues/manual_reviews.html",
            {"title": TITLE, "items": items, "bulk_key": str(uuid.uuid4()), "problem": problem},
            status=status,
        )

    def post(self, request):
        form = BulkForm(request.POST)
        if not form.is_valid():
            return render(
                request,
                "timeline/team/bulk_results.html",
                {"title": TITLE, "form": form, "back": "console:decision_manual_bulk"},
                status=400,
            )
        chosen = {
            item_id: request.POST.get(f"action-{item_id}", "")
            for item_id in form.cleaned_data["ids"]
        }
        chosen = {item_id: action for item_id, action in chosen.items() if action}
        if not chosen:
            return self.page(
                request,
                _("Nothing was done: choose what happens to at least one coupon."),
                status=400,
            )
        seen, note = form.seen, form.cleaned_data["note"]
        results = [
            self.run_item(
                request, item_id, action, note, seen.get(item_id, ""), form.cleaned_data["bulk_key"]
            )
            for item_id, action in chosen.items()
        ]
        return render(
            request,
            "timeline/team/bulk_results.html",
            {
                "title": TITLE,
                "results": results,
                "back": "console:decision_manual_bulk",
                "done": sum(r.ok for r in results),
                "refused": sum(not r.ok for r in results),
                "left": len(form.cleaned_data["ids"]) - len(chosen),
            },
        )

    def run_item(self, request, item_id, action, note, seen_entry, bulk_key) -> ItemResult:
        record = decision_get(decision_id=item_id)
        if record is None:
            return ItemResult(item_id, False, _("There is no such item."), "NOT_FOUND")
        key = str(uuid.uuid5(BULK_KEYS, f"{bulk_key}:manual:{item_id}"))
        return run_item_form(
            request,
            DecisionApprove(),
            record,
            {"action": action, "note": note, "seen_entry": seen_entry},
            key,
            reload=lambda: decision_get(decision_id=item_id),
        )

"""One reason for many items: bulk approve or reject of refund decisions, bulk resolve of cases.

A bulk form is confirmed as a single button is: the first post answers a page naming every
item and what its action would write (the plan its service executes), and only the confirmed
post runs them. An item the bulk action cannot do (a manual review needs its own choice of
what happens to the coupon) is set aside and listed with a link to its own form, never run.

Each item goes through exactly what its own button does: the item's form, validated for that
record, run once by `run_action` under a key of its own (derived from the bulk form's key and
the item, so the same bulk form sent twice replays every item instead of running it again),
calling the same service, and naming the version of the item the list showed beside its
checkbox (`seen-<id>`), as its own form would. Every item answers for itself: a refusal
(already decided, changed since the list, the four-eyes rule, a form that does not fit the
record) is shown beside it and never stops the others.
"""

import uuid
from dataclasses import dataclass

from django import forms
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from coupons.capabilities import Capability
from coupons.effects import Plan
from coupons.services.cases import resolution_plan
from refunds.models import RefundCoupon
from refunds.services.refund_execute import execution_plan
from refunds.services.refund_review import actions_allowed
from timeline.effects import plan_html
from timeline.queue_forms import NOTE_MAX, CaseResolveForm
from timeline.queue_selectors import case_get, decision_get
from timeline.views.access import ConsolePage
from timeline.views.queue_actions import run_action
from timeline.views.queues_approvals import DecisionApprove, DecisionReject
from timeline.views.queues_cases import CaseResolve

BULK_MAX = 100
BULK_KEYS = uuid.UUID("6f1d3c52-9e0b-4c55-a8e4-19a4f6f0b7d1")  # namespace of per-item keys


class BulkForm(forms.Form):
    ids = forms.TypedMultipleChoiceField(coerce=int, label=gettext_lazy("Items"))
    note = forms.CharField(max_length=NOTE_MAX, required=False, label=gettext_lazy("Reason"),
                           widget=forms.Textarea(attrs={"rows": 2}))
    bulk_key = forms.UUIDField(widget=forms.HiddenInput)

    def __init__(self, *args, verbs=None, **kwargs):
        super().__init__(*args, **kwargs)
        if verbs is not None:  # a form whose items each carry their own choice has no verb
            self.fields["verb"] = forms.ChoiceField(choices=verbs)
        # Any id may be asked for; each is then looked up on its own (a missing one is refused).
        self.fields["ids"].choices = [(value, value) for value in self.data.getlist("ids")
                                     if value.isdigit()][:BULK_MAX]

    def clean_ids(self):
        ids = self.cleaned_data["ids"]
        if len(ids) > BULK_MAX:
            raise forms.ValidationError(_("At most %(max)s items at once.") % {"max": BULK_MAX})
        return list(dict.fromkeys(ids))

    @property
    def seen(self) -> dict[int, str]:
        """Per item, the version of it the list showed (`seen-<id>`, beside its checkbox), for
        the forms that name one: each item's own form checks it."""
        return {item_id: self.data[f"seen-{item_id}"] for item_id in self.cleaned_data["ids"]
                if f"seen-{item_id}" in self.data}


@dataclass
class ItemResult:
    id: int
    ok: bool
    message: str
    code: str = ""
    replayed: bool = False
    set_aside: bool = False
    url: str = ""  # a set-aside item's own form


class BulkAction(ConsolePage):
    """Subclasses name each verb's single action (`actions`), how to load an item, the item's
    form data, and where the list is."""

    actions: dict = {}
    verbs: list = []
    list_url_name = ""
    title = ""

    def load(self, item_id):
        raise NotImplementedError

    def item_data(self, verb: str, note: str, seen_entry: str) -> dict:
        """The item's own form data; `seen_entry` is the version the list showed of it, ""
        when it showed none."""
        raise NotImplementedError

    def set_aside(self, verb: str, record) -> str:
        """Why `record` is left for its own form under `verb`, or "" when bulk can do it."""
        return ""

    def effect(self, verb: str, record) -> str:
        """What `verb` would write for `record`: the plan its service executes."""
        raise NotImplementedError

    def item_url(self, record) -> str:
        raise NotImplementedError

    def post(self, request):
        form = BulkForm(request.POST, verbs=self.verbs)
        if not form.is_valid():
            return render(request, "timeline/team/bulk_results.html", {
                "title": self.title, "form": form, "back": self.list_url_name}, status=400)
        verb, note = form.cleaned_data["verb"], form.cleaned_data["note"]
        if request.POST.get("confirmed") != "yes":
            return self.confirm(request, form)
        seen = form.seen
        results = [self.run_item(request, verb, note, form.cleaned_data["bulk_key"], item_id,
                                 seen.get(item_id, ""))
                   for item_id in form.cleaned_data["ids"]]
        return render(request, "timeline/team/bulk_results.html", {
            "title": self.title, "results": results, "back": self.list_url_name,
            "done": sum(r.ok for r in results),
            "refused": sum(not r.ok and not r.set_aside for r in results),
            "set_aside": sum(r.set_aside for r in results)})

    def confirm(self, request, form):
        verb = form.cleaned_data["verb"]
        seen = form.seen
        items = []
        for item_id in form.cleaned_data["ids"]:
            record = self.load(item_id)
            if record is None:
                items.append({"id": item_id, "missing": True})
                continue
            aside = self.set_aside(verb, record)
            # Said before it is confirmed; the item's own service refuses it all the same.
            changed = item_id in seen and seen[item_id] != getattr(record, "journal_tip", None)
            items.append({"id": item_id, "set_aside": aside, "url": self.item_url(record),
                          "changed": changed,
                          "effect": "" if aside or changed else self.effect(verb, record)})
        # No "Yes" button for a list where nothing would run: it would do nothing.
        runnable = any(item.get("effect") for item in items)
        return render(request, "timeline/team/bulk_confirm.html", {
            "title": self.title, "items": items, "form": form, "back": self.list_url_name,
            "runnable": runnable,
            "verb_label": dict(self.verbs)[verb], "action": request.path})

    def run_item(self, request, verb, note, bulk_key, item_id, seen_entry) -> ItemResult:
        action = self.actions[verb]()
        record = self.load(item_id)
        if record is None:
            return ItemResult(item_id, False, _("There is no such item."), "NOT_FOUND")
        aside = self.set_aside(verb, record)
        if aside:
            return ItemResult(item_id, False, aside, set_aside=True, url=self.item_url(record))
        key = str(uuid.uuid5(BULK_KEYS, f"{bulk_key}:{verb}:{item_id}"))
        return run_item_form(request, action, record, self.item_data(verb, note, seen_entry),
                             key, reload=lambda: self.load(item_id))


def run_item_form(request, action, record, data: dict, key: str, reload) -> ItemResult:
    """One item exactly as its own button runs it: `action`'s form with `data` for `record`,
    once under `key`; `reload` reads the record again for the answer's summary."""
    item_form = action.form_class({**data, "idempotency_key": key}, record=record)
    if not item_form.is_valid():
        # Named by the field's label: "What happens to the coupon: This field is required."
        reasons = "; ".join(
            f"{item_form.fields[name].label}: {error}" if name in item_form.fields
            else str(error)
            for name, errors in item_form.errors.items() for error in errors)
        return ItemResult(record.pk, False, reasons, "VALIDATION_ERROR")
    outcome = run_action(request, item_form,
                         lambda ctx: action.execute(ctx, item_form.cleaned_data, record))
    if outcome.error:
        return ItemResult(record.pk, False,
                          action.refusal_words(outcome.error) or outcome.error["message"],
                          outcome.error["code"])
    return ItemResult(record.pk, True, action.summary(reload()), replayed=outcome.replayed)


class DecisionBulk(BulkAction):
    capabilities = {"POST": Capability.APPROVE_REFUNDS}
    actions = {"approve": DecisionApprove, "reject": DecisionReject}
    verbs = [("approve", gettext_lazy("Approve")), ("reject", gettext_lazy("Reject"))]
    list_url_name = "console:approvals"
    title = gettext_lazy("Refund decisions: one reason for many")

    def load(self, item_id):
        return decision_get(decision_id=item_id)

    def item_data(self, verb, note, seen_entry):
        return {"note": note, "action": "", "seen_entry": seen_entry}

    def set_aside(self, verb, decision):
        if verb == "approve" and decision.action == RefundCoupon.Action.MANUAL_REVIEW:
            return _("A manual review needs its own choice of what happens to the coupon: "
                     "decide it on the manual reviews form.")
        if verb == "approve" and not actions_allowed(decision, decision.coupon):
            return _("The coupon moved since this decision was made and its state no longer "
                     "allows it: open it on its own.")
        return ""

    def item_url(self, decision):
        if decision.action == RefundCoupon.Action.MANUAL_REVIEW:
            return reverse("console:decision_manual_bulk") + f"#decision-{decision.pk}"
        return reverse("console:approvals") + f"#decision-{decision.pk}"

    def effect(self, verb, decision):
        if verb == "reject":
            return plan_html(Plan(state=decision.coupon.status))
        return plan_html(execution_plan(decision, decision.action, decision.coupon))


class CaseBulk(BulkAction):
    capabilities = {"POST": Capability.RESOLVE_CASES}
    actions = dict.fromkeys(CaseResolveForm.ACTIONS, CaseResolve)
    verbs = [(verb, label) for verb, label in CaseResolveForm.ACTIONS.items() if verb]
    list_url_name = "console:cases"
    title = gettext_lazy("Conflict cases: one reason for many")

    def load(self, item_id):
        return case_get(case_id=item_id)

    def item_data(self, verb, note, seen_entry):
        return {"action": verb, "note": note}

    def effect(self, verb, case):
        return plan_html(resolution_plan(case, verb))

    def item_url(self, case):
        return reverse("console:cases") + f"#case-{case.pk}"


"""How every queue button runs: validate, confirm, run once under the form's key, answer.

A queue action is a POST of a form that carries an idempotency key rendered with it. The key
is claimed exactly as the API claims an Idempotency-Key header (coupons.write.idempotency):
the same form submitted twice runs the command once and the second answer is the first
result. Domain errors are shown beside the form with their code; they never become a 500.
An htmx request gets the item's partial back, the same include the list renders; a plain
form post is redirected to the queue with a message.
"""

from dataclasses import dataclass, field

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from coupons.errors import CouponError, ValidationFailed
from coupons.identity import actor_of, idempotency_scope_of
from coupons.write.idempotency import run_once
from coupons.write.idempotency_seal import request_fingerprint
from timeline.queue_selectors import operations_written
from timeline.views.access import ConsolePage

# A partial answering a refusal (409, 422 ...) carries this header so console.js swaps it in:
# htmx leaves error answers unswapped by default, and the 403 page must stay unswapped.
FRAGMENT_HEADER = "X-Console-Fragment"


@dataclass
class Outcome:
    """What one submission came to: the stored answer of its key, first time or replayed."""

    status: int
    body: dict
    replayed: bool = False
    operations: list = field(default_factory=list)
    message: str = ""
    # A refusal said as a sentence of the console's own (the code stays beside it as a
    # badge, the details unshown); "" when the refusal's message says it.
    explained: str = ""

    @property
    def error(self) -> dict | None:
        return self.body.get("error")


def run_action(request, form, command) -> Outcome:
    """`command(ctx)` calls one service and returns the answer's body (with the record's id)."""
    try:
        answer = run_once(
            scope=idempotency_scope_of(request.user),
            key=form.cleaned_data["idempotency_key"],
            request_hash=request_fingerprint("POST", request.path, form.command_fields()),
            actor=actor_of(request.user), command=command,
        )
    except CouponError as refusal:  # the key is in use for another request, or still running
        return Outcome(status=refusal.http_status, body=refusal.as_body())
    return Outcome(status=answer.status, body=answer.body, replayed=answer.replayed)


class QueueAction(ConsolePage):
    """One button of a queue. Subclasses name the form, how to load and change the record,
    and how the queue shows it (`item`, rendered by `row_template`)."""

    form_class = None
    form_slot = ""  # which of the item's forms this action submits
    row_template = ""
    list_url_name = ""
    verb = ""

    def load(self, **kwargs):
        raise NotImplementedError

    def execute(self, ctx, data: dict, record) -> dict:
        raise NotImplementedError

    def item(self, request, record, **forms) -> dict:
        raise NotImplementedError

    def coupon_id_of(self, record) -> int:
        return record.coupon_id

    def summary(self, record) -> str:
        raise NotImplementedError

    def refusal_words(self, error: dict) -> str:
        """A refusal this queue says in a sentence of its own, or "" for its message."""
        return ""

    def after(self, outcome: Outcome, **kwargs):
        """The record as the answer shows it, read again after the command."""
        return self.load(**kwargs)

    def post(self, request, **kwargs):
        record = self.load(**kwargs)
        if record is None and kwargs:
            raise Http404("No such record.")
        form = self.form_class(request.POST, record=record)
        if not form.is_valid():
            return self.answer(request, self.item(request, record, **{self.form_slot: form}))
        if request.POST.get("confirmed") != "yes":
            return render(request, "timeline/queues/confirm.html", {
                "verb": self.verb, "record": record, "form": form, "action": request.path,
                "cancel": self.list_url_name,
            })
        outcome = run_action(request, form,
                             lambda ctx: self.execute(ctx, form.cleaned_data, record))
        record = self.after(outcome, **kwargs)
        if outcome.error:
            # A VALIDATION_ERROR names the fields it is about: each shows beside its field.
            # Other refusals' details are facts about the record (NOT_FOUND's ids), said once
            # in the error box, never as field errors.
            fields_refused = outcome.error.get("details", {}) \
                if outcome.error.get("code") == ValidationFailed.code else {}
            outcome.explained = self.refusal_words(outcome.error)
            again = form.with_fresh_key(refused=fields_refused, record=record)
            forms = {self.form_slot: again}
            return self.answer(request, self.item(request, record, **forms), outcome,
                               status=outcome.status)
        outcome.operations = operations_written(
            coupon_id=self.coupon_id_of(record),
            idempotency_key=form.cleaned_data["idempotency_key"])
        outcome.message = self.summary(record)
        if not request.htmx:
            messages.success(request, self.flash(outcome))
            return redirect(self.list_url_name)
        return self.answer(request, self.item(request, record), outcome)

    def flash(self, outcome: Outcome) -> str:
        rows = pgettext("between ledger rows", "; ").join(
            _("ledger #%(id)s %(op)s %(from_state)s → %(to_state)s "
              "(v%(from_version)s → v%(to_version)s)") % {
                "id": op.pk, "op": op.op_type, "from_state": op.from_state or "—",
                "to_state": op.to_state, "from_version": op.from_version,
                "to_version": op.to_version}
            for op in outcome.operations)
        message = outcome.message
        if outcome.replayed:
            message = _("Already done (this form was sent before): %(message)s") % {
                "message": message}
        return _("%(message)s %(rows)s.") % {"message": message, "rows": rows} if rows \
            else message

    def answer(self, request, item, outcome=None, status=200):
        context = {"item": item, "outcome": outcome, "row_template": self.row_template}
        if request.htmx:
            response = render(request, self.row_template, context, status=status)
            response[FRAGMENT_HEADER] = "1"
            return response
        return render(request, "timeline/queues/action.html",
                      {**context, "back": self.list_url_name, "verb": self.verb},
                      status=status)

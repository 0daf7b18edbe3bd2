"""How every queue button runs: validate, confirm, run once under the form's key, answer.

A queue action is a POST of a form that carries an idempotency key rendered with it. The key
is claimed exactly as the API claims an Idempotency-Key header (coupons.services.idempotency):
the same form submitted twice runs the command once and the second answer is the first
result. Domain errors are shown beside the form with their code; they never become a 500.
An htmx request gets the item's partial back, the same include the list renders; a plain
form post is redirected to the queue with a message.
"""

from dataclasses import dataclass, field

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render

from coupons.api.permissions import actor_of, idempotency_scope_of
from coupons.errors import CouponError
from coupons.services import CommandContext
from coupons.services.idempotency import (
    idempotency_abandon,
    idempotency_claim,
    idempotency_complete,
    request_fingerprint,
)
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

    @property
    def error(self) -> dict | None:
        return self.body.get("error")


def run_once(request, form, command) -> Outcome:
    """`command(ctx)` calls one service and returns the answer's body (with the record's id)."""
    key = form.cleaned_data["idempotency_key"]
    request_hash = request_fingerprint("POST", request.path, form.command_fields())
    try:
        claim = idempotency_claim(scope=idempotency_scope_of(request.user), key=key,
                                  request_hash=request_hash)
    except CouponError as refusal:  # the key is in use for another request, or still running
        return Outcome(status=refusal.http_status, body=refusal.as_body())
    if claim.is_replay:
        return Outcome(status=claim.replay_status, body=claim.replay_body, replayed=True)
    ctx = CommandContext(actor=actor_of(request.user), idempotency_key=key,
                         request_hash=request_hash, idempotency_record_id=claim.record_id)
    try:
        body = command(ctx)
    except CouponError as refusal:
        # The refusal is the key's answer: submitting the same form again shows it again.
        idempotency_complete(ctx, status=refusal.http_status, body=refusal.as_body())
        return Outcome(status=refusal.http_status, body=refusal.as_body())
    except Exception:
        idempotency_abandon(claim.record_id)  # rolled back, nothing happened: a retry may run
        raise
    # Services that store their own answer did so in their transaction; this is a no-op then.
    idempotency_complete(ctx, status=200, body=body)
    return Outcome(status=200, body=body)


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
            return render(request, "console/queues/confirm.html", {
                "verb": self.verb, "record": record, "form": form, "action": request.path,
                "cancel": self.list_url_name,
            })
        outcome = run_once(request, form,
                           lambda ctx: self.execute(ctx, form.cleaned_data, record))
        record = self.after(outcome, **kwargs)
        if outcome.error:
            # A VALIDATION_ERROR names the fields it is about: each shows beside its field.
            again = form.with_fresh_key(refused=outcome.error.get("details", {}))
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
        rows = "; ".join(f"ledger #{op.pk} {op.op_type} {op.from_state or '—'} → {op.to_state} "
                         f"(v{op.from_version} → v{op.to_version})"
                         for op in outcome.operations)
        first = "Already done (this form was sent before): " if outcome.replayed else ""
        return f"{first}{outcome.message}" + (f" {rows}." if rows else "")

    def answer(self, request, item, outcome=None, status=200):
        context = {"item": item, "outcome": outcome, "row_template": self.row_template}
        if request.htmx:
            response = render(request, self.row_template, context, status=status)
            response[FRAGMENT_HEADER] = "1"
            return response
        return render(request, "console/queues/action.html",
                      {**context, "back": self.list_url_name, "verb": self.verb},
                      status=status)

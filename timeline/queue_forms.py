"""The queues' action forms. Each carries the idempotency key it was rendered with, so a
double click or a resubmitted page is the same command and takes effect once."""

import uuid
from decimal import Decimal

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons.models import Recommendation
from refunds.models import RefundCoupon
from refunds.recommendation import decision_now
from refunds.services.refund_review import MANUAL_CHOICES
from timeline.answers import ACTIONS as ACTION_WORDS
from timeline.answers import RECOMMENDATIONS
from timeline.queue_selectors import issuable_templates

NOTE_MAX = 1000


def fresh_key() -> str:
    return str(uuid.uuid4())


class ActionForm(forms.Form):
    # A callable initial: every rendering of an unbound form gets its own key.
    idempotency_key = forms.CharField(widget=forms.HiddenInput, initial=fresh_key, max_length=255)

    def __init__(self, *args, record=None, **kwargs):
        self.record = record
        # Every item of a queue has its forms on one page: ids name the form and the record.
        owner = getattr(record, "pk", "new")
        kwargs.setdefault("auto_id", f"{type(self).__name__.lower()}-{owner}-%s")
        super().__init__(*args, **kwargs)

    def clean_idempotency_key(self) -> str:
        key = self.cleaned_data["idempotency_key"].strip()
        if not key.isprintable():  # as the API's header: a control character cannot be stored
            raise forms.ValidationError(_("The form's key must be printable characters only."))
        return key

    def command_fields(self) -> dict:
        """What the command is asked to do: the request the key's fingerprint covers."""
        return {name: value for name, value in self.cleaned_data.items()
                if name != "idempotency_key"}

    def with_fresh_key(self, refused: dict, record=None) -> "ActionForm":
        """The same choices under a new key, for another attempt after a refusal (the refused
        key keeps answering its refusal); `refused` puts the service's reasons by their
        fields. `record` is the record as the answer shows it, read again after the refusal:
        a decision form then names that version, the one the operator now sees."""
        record = record if record is not None else self.record
        data = self.data.copy()
        data["idempotency_key"] = fresh_key()
        if "seen_entry" in self.fields:
            data["seen_entry"] = getattr(record, "journal_tip", None) or ""
        again = type(self)(data, record=record)
        again.is_valid()
        for name, reason in refused.items():
            if name in again.fields:
                again.add_error(name, str(reason))
        return again


# No decision is pre-selected: an operator who presses a button without choosing is asked to
# choose, instead of executing whatever happened to be first in the list.
CHOOSE = ("", _("Choose…"))


class CaseResolveForm(ActionForm):
    ACTIONS = {
        "": CHOOSE[1],
        "APPLY": _("Apply the recommendation"),
        "RESOLVE": _("Resolved by hand"),
        "DISMISS": _("Dismiss"),
    }
    action = forms.ChoiceField(choices=ACTIONS.items(), label=_("Action"))
    note = forms.CharField(label=_("Reason"), max_length=NOTE_MAX,
                           widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        recommendation = getattr(self.record, "recommendation", None)
        choices = dict(self.ACTIONS)
        if recommendation == Recommendation.MANUAL_REVIEW:
            del choices["APPLY"]  # nothing to apply: the case needs a person's own remedy
        elif recommendation:
            choices["APPLY"] = gettext("Apply the recommendation (%(recommendation)s)") % {
                "recommendation": RECOMMENDATIONS[recommendation][0]
                if recommendation in RECOMMENDATIONS else recommendation}
        self.fields["action"].choices = choices.items()


class DecideForm(ActionForm):
    """Approves or rejects a record: names the version shown with the form, the hash of the
    record's newest journal entry (read with it, coupons.evidence.tips). The service refuses
    the decision when the record moved since (EVIDENCE_CHANGED)."""

    seen_entry = forms.RegexField(
        r"^[0-9a-f]{64}$", widget=forms.HiddenInput, label=_("Version shown"),
        error_messages={"required": _("The page did not say which version you saw; open "
                                      "the queue again."),
                        "invalid": _("The page did not say which version you saw; open "
                                     "the queue again.")})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["seen_entry"].initial = getattr(self.record, "journal_tip", None)


def action_word(code: str):
    """A refund action as an option says it: the word (an option holds no badge; its value is
    the code)."""
    return ACTION_WORDS[code][0] if code in ACTION_WORDS else code


class ApproveDecisionForm(DecideForm):
    action = forms.ChoiceField(label=_("What happens to the coupon"), required=False,
                               choices=[("", _("As decided"))] + [(a, action_word(a))
                                                                  for a in MANUAL_CHOICES])
    note = forms.CharField(label=_("Note"), max_length=NOTE_MAX, required=False,
                           widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        manual = getattr(self.record, "action", None) == RefundCoupon.Action.MANUAL_REVIEW
        self.fields["action"].required = manual
        if manual:
            now = decision_now(self.record, self.record.coupon)
            # The recommendation is named in its option, never selected for the operator.
            self.fields["action"].choices = [CHOOSE] + [
                (a, gettext("%(action)s (recommended)") % {"action": action_word(a)}
                 if a == now.action else action_word(a)) for a in MANUAL_CHOICES]
            # Offered: what the coupon's state allows now. Accepted: any manual choice, so a
            # choice the coupon moved away from since the page reaches the service, which
            # refuses it in a sentence and records the refusal.
            self.fields["action"].widget.choices = [
                choice for choice in self.fields["action"].choices
                if not choice[0] or choice[0] in now.options]
        else:
            self.fields["action"].widget = forms.HiddenInput()


class RejectForm(DecideForm):
    note = forms.CharField(label=_("Reason"), max_length=NOTE_MAX,
                           widget=forms.Textarea(attrs={"rows": 2}))


class ApproveCompensationForm(DecideForm):
    note = forms.CharField(label=_("Note"), max_length=NOTE_MAX, required=False,
                           widget=forms.Textarea(attrs={"rows": 2}))


class ProposeCompensationForm(ActionForm):
    """Made from one ledger row's button: the row is the record, carried as a hidden id (never
    typed), so the only choices left are reversing it or paying an amount, and why."""

    REVERSE, PAY = "reverse", "pay"
    # Text, looked up by the view: an id that names no row is NOT_FOUND, not a field error.
    operation_id = forms.CharField(widget=forms.HiddenInput, max_length=20, required=False)
    remedy = forms.ChoiceField(
        label=_("Compensate by"), widget=forms.RadioSelect,
        choices=[(REVERSE, _("reversing this operation")), (PAY, _("paying an amount"))])
    amount = forms.DecimalField(
        label=_("Amount"), required=False, min_value=Decimal("0.01"), max_digits=12,
        decimal_places=2, help_text=_("Paid only when you choose to pay an amount."),
    )
    reason = forms.CharField(label=_("Reason"), max_length=500,
                             widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.record is not None and not self.record.reversible:
            self.fields["remedy"].choices = [(self.PAY, _("paying an amount"))]

    def clean(self):
        data = super().clean()
        if data.get("remedy") == self.PAY and data.get("amount") is None \
                and "amount" not in self.errors:
            self.add_error("amount", _("Give the amount to pay."))
        if data.get("remedy") == self.REVERSE:
            data["amount"] = None  # a reversal pays nothing, whatever the box still holds
        return data


class ProposeGoodwillForm(ActionForm):
    """A goodwill coupon for one customer and the order or case it makes good. From a coupon's
    page the coupon is carried as a hidden id (its owner is the customer); from elsewhere the
    customer's user id is typed. Only templates that still issue coupons are offered."""

    coupon_id = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1,
                                   max_value=2**63 - 1)
    user_id = forms.CharField(label=_("Customer (user id)"), max_length=64, required=False)
    template_id = forms.TypedChoiceField(label=_("Template"), coerce=int)
    answers = forms.CharField(label=_("Order or case it answers"), max_length=64,
                              help_text=_("The order id or support case number: one goodwill "
                                          "coupon per customer and order or case."))
    reason = forms.CharField(label=_("Reason"), max_length=500,
                             widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["template_id"].choices = [CHOOSE] + [
            (template.pk, f"{template.name} ({template.code})")
            for template in issuable_templates()]
        if self.record is not None:  # proposed from this coupon: for its owner
            self.fields["user_id"].widget = forms.HiddenInput()
            self.initial.setdefault("coupon_id", self.record.pk)

    def clean(self):
        data = super().clean()
        if data.get("coupon_id") is None and not (data.get("user_id") or "").strip() \
                and "user_id" not in self.errors:
            self.add_error("user_id", _("Name the customer."))
        return data


class ApproveGoodwillForm(DecideForm):
    note = forms.CharField(label=_("Note"), max_length=NOTE_MAX, required=False,
                           widget=forms.Textarea(attrs={"rows": 2}))

"""The queues' action forms. Each carries the idempotency key it was rendered with, so a
double click or a resubmitted page is the same command and takes effect once."""

import uuid
from decimal import Decimal

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons.models import Recommendation
from refunds.models import RefundCoupon
from refunds.services.refund_review import MANUAL_CHOICES

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

    def with_fresh_key(self, refused: dict) -> "ActionForm":
        """The same choices under a new key, for another attempt after a refusal (the refused
        key keeps answering its refusal); `refused` puts the service's reasons by their
        fields."""
        data = self.data.copy()
        data["idempotency_key"] = fresh_key()
        again = type(self)(data, record=self.record)
        again.is_valid()
        for name, reason in refused.items():
            if name in again.fields:
                again.add_error(name, str(reason))
        return again


class CaseResolveForm(ActionForm):
    ACTIONS = {
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
                "recommendation": recommendation}
        self.fields["action"].choices = choices.items()


class ApproveDecisionForm(ActionForm):
    action = forms.ChoiceField(label=_("What happens to the coupon"), required=False,
                               choices=[("", _("As decided"))] + [(a, a) for a in MANUAL_CHOICES])
    note = forms.CharField(label=_("Note"), max_length=NOTE_MAX, required=False,
                           widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        manual = getattr(self.record, "action", None) == RefundCoupon.Action.MANUAL_REVIEW
        self.fields["action"].required = manual
        if manual:
            self.fields["action"].choices = [(a, a) for a in MANUAL_CHOICES]
        else:
            self.fields["action"].widget = forms.HiddenInput()


class RejectForm(ActionForm):
    note = forms.CharField(label=_("Reason"), max_length=NOTE_MAX,
                           widget=forms.Textarea(attrs={"rows": 2}))


class ApproveCompensationForm(ActionForm):
    note = forms.CharField(label=_("Note"), max_length=NOTE_MAX, required=False,
                           widget=forms.Textarea(attrs={"rows": 2}))


class ProposeCompensationForm(ActionForm):
    coupon_id = forms.IntegerField(label=_("Coupon"), min_value=1, max_value=2**63 - 1)
    operation_id = forms.IntegerField(label=_("Ledger operation"), min_value=1, max_value=2**63 - 1)
    amount = forms.DecimalField(
        label=_("Amount"), required=False, min_value=Decimal("0.01"), max_digits=12,
        decimal_places=2,
        help_text=_("Leave empty to reverse the operation; an amount pays money instead."),
    )
    reason = forms.CharField(label=_("Reason"), max_length=500,
                             widget=forms.Textarea(attrs={"rows": 2}))

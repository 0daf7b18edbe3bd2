"""Why a refund decision is where it is, as the services say it: message codes with values.

The decision keeps its English `reason` (journaled); `reason_code` and `reason_params` name
the sentence (coupons/sentences.py), so the timeline reads it in the reader's language. A
decision written before the codes reads as stored.
"""

from django.utils.translation import gettext_lazy as _

from coupons import sentences

REASONS = {
    "awaiting_redemption": _("Waiting for the order's redemption; decided when it arrives."),
    "operator_decides": _("An operator decides."),
    "refused_operator_decides": _("%(action)s was refused (%(code)s); an operator decides."),
    "deposit_lease_ended": _("presale deposit of order %(order)s refunded (%(refund)s): lease "
                             "ended, coupon %(state)s"),
}


def decision_reason(code: str, **params) -> dict:
    """The decision's three reason columns for the sentence `code` names."""
    text = sentences.Coded(REASONS, code, **params)
    return {"reason": str(text)[:500], "reason_code": code, "reason_params": params}


def decision_reason_words(decision) -> str:
    return sentences.read(REASONS, decision.reason_code, decision.reason_params, decision.reason)

"""What a reconciliation finding says, as message codes with values.

A finding keeps its English `summary` (what the run wrote, and what the API and the logs
quote); beside it `summary_code` and `summary_params` name the sentence (coupons/sentences.py),
so the console's findings list reads it in the reader's language. A finding written before
the codes reads as stored.
"""

from django.utils.translation import gettext_lazy as _

from coupons import sentences

SUMMARIES = {
    "paid_not_redeemed": _("Order %(order)s was paid with this coupon, which is still "
                           "%(state)s."),
    "paid_held_by_other": _("Order %(order)s was paid with this coupon, which is still "
                            "%(state)s (held by order %(holder)s)."),
    "closed_still_locked": _("Order %(order)s ended (%(facts)s) unpaid; the coupon is still "
                             "locked for it."),
    "ghost_redemptions": _("The coupon is USED with %(count)s successful redemptions."),
    "ghost_unbound": _("The coupon is USED with its redemption by order %(order)s has no order "
                       "binding."),
    "double_consumption": _("The coupon is consumed by %(count)s paid orders: %(orders)s."),
    "return_not_advanced": _("Refund %(refund)s decided RETURN (%(status)s), but the coupon is "
                             "still %(state)s and its redemption live."),
    "return_unpublished": _("The RETURN for refund %(refund)s was never announced: its event "
                            "is unpublished since %(since)s."),
    "return_no_event": _("The RETURN for refund %(refund)s was never announced: it has no "
                         "outbox event."),
    "deposit_not_bound": _("Order %(order)s paid a presale deposit naming this coupon, which "
                           "never became the order's (the coupon is %(state)s)."),
    "paid_without_binding": _("The order system says order %(order)s was paid with this "
                              "coupon, but the order never held it."),
    "fact_never_sent": _("The order and payment systems' records say order %(order)s had a "
                         "%(fact)s this service never received."),
    "ledger_gap": _("The ledger's versions are not contiguous (%(count)s breaks): history was "
                    "bypassed."),
}


def summary(code: str, **params) -> sentences.Coded:
    """The English summary `code` names, carrying its code and values to the finding."""
    return sentences.Coded(SUMMARIES, code, **params)


def summary_fields(text) -> dict:
    return {"summary": str(text)[:500], "summary_code": sentences.code_of(text),
            "summary_params": sentences.params_of(text) or {}}


def summary_words(finding) -> str:
    """The finding's summary in the reader's language, or as stored when it has no code."""
    return sentences.read(SUMMARIES, finding.summary_code, finding.summary_params,
                          finding.summary)

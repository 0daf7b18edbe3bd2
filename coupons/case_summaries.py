"""What a conflict case's summary says, as message codes with parameters.

A case is evidence: its `summary` keeps the English sentence written when it opened. Beside it
the case stores which sentence (`summary_code`) and its values (`summary_params`), so a reader
gets the sentence in their own language from the catalogue. A case written before the codes
(no `summary_code`) reads as it was stored.
"""

from django.utils.translation import gettext_lazy as _

from coupons import sentences

SUMMARIES = {
    "free_again": _("The coupon is free again: lock and redeem it for the paid order."),
    "held_by_another_order": _("Order %(order)s now holds the coupon: refund this order's "
                               "discount instead."),
    "used_by_another_order": _("Order %(order)s used the coupon: refund this order's discount "
                               "instead."),
    "no_remedy": _("The coupon is %(state)s; no automatic remedy fits."),
    "deposit_substitute": _("The deposit of order %(order)s could not lock coupon %(coupon)s "
                            "(%(code)s): lock the buyer's coupon %(substitute)s instead."),
    "deposit_compensate": _("The deposit of order %(order)s could not lock coupon %(coupon)s "
                            "(%(code)s): order %(holder)s holds or used it; compensate this "
                            "order's discount."),
    "deposit_review": _("The deposit of order %(order)s could not lock coupon %(coupon)s "
                        "(%(code)s); no automatic remedy fits."),
}


def summary_words(code: str, params: dict) -> str:
    """The sentence `code` names, in the active language."""
    return sentences.words(SUMMARIES, code, params)


def stored_summary(code: str, params: dict) -> str:
    """The English sentence the case keeps as its record."""
    return sentences.english(SUMMARIES, code, params)


def case_summary(case) -> str:
    """The case's summary in the reader's language, or as stored when it has no code."""
    return sentences.read(SUMMARIES, case.summary_code, case.summary_params, case.summary)

"""Why a ledger row or a compensation was written, as the services say it: message codes with
values.

The row's `reason` keeps the English text (the record; the ledger's is journaled);
`reason_code` and `reason_params` say which sentence it is (coupons/sentences.py), so the
ledger, the timeline and the queues read it in the reader's language. A reason a person typed
(a void's, a proposed compensation's) has no code and reads as typed.
"""

from django.utils.translation import gettext_lazy as _

from coupons import sentences
from coupons.case_summaries import summary_words

REASONS = {
    "issued_from": _("issued from %(terms)s"),
    "past_valid_until": _("past valid_until %(valid_until)s"),
    "lease_moved": _("lease %(from)s → %(to)s"),
    "expired_before_redeem": _("expired before redeem (%(strategy)s)"),
    "lease_expired": _("lease expired"),
    "order_ended": _("%(fact)s for order %(order)s"),
    "order_closed_unpaid": _("order %(order)s closed: final payment not made"),
    "deposit_refunded": _("presale deposit of order %(order)s refunded (%(refund)s)"),
    "refund_of_order": _("refund %(refund)s of order %(order)s: %(rule)s"),
    "compensation": _("compensation %(compensation)s: %(reason)s"),
    "compensation_of_kind": _("compensation %(compensation)s (%(kind)s): %(reason)s"),
    "conflict_case": _("conflict case %(case)s: %(case_summary)s"),
    "goodwill": _("goodwill coupon %(goodwill)s for %(answers)s, issued from %(terms)s"),
    "presale_no_substitute": _("the deposit's coupon expired before final payment and no "
                               "substitute fits"),
}
# A case's summary inside a reason is stored as its own code and values.
sentences.VALUE_WORDS["case_summary"] = lambda summary: summary_words(summary["code"],
                                                                      summary["params"])


def reason(code: str, **params) -> sentences.Coded:
    """The English reason `code` names, carrying its code and values to the ledger row."""
    return sentences.Coded(REASONS, code, **params)


def reason_fields(text) -> dict:
    """The ledger row's three reason columns for `text` (a `reason(...)` or typed text)."""
    return {"reason": str(text)[:500], "reason_code": sentences.code_of(text),
            "reason_params": sentences.params_of(text)}


def case_reason(case) -> str:
    """Why a case's remedy is owed: its summary's sentence when it has one."""
    if not case.summary_code:
        return f"conflict case {case.pk}: {case.summary}"
    return reason("conflict_case", case=case.pk,
                  case_summary={"code": case.summary_code, "params": case.summary_params})


def reason_words(row) -> str:
    """A ledger row's or a compensation's reason in the reader's language, or as stored when
    it has no code."""
    return sentences.read(REASONS, row.reason_code, row.reason_params, row.reason)

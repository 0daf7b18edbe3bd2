"""A timeline entry's title in the reader's words: each code it names (a fact, an operation,
an error, a refund action or type, a compensation's kind and status) as its word with the code
in a badge beside it (timeline.glossary), from the codes the entry's details carry.

The domain's titles (coupons/history.py, refunds/history.py) are plain text for the API, with
the codes in them as they are; the console writes its own from the same details.
"""

from django.utils.html import conditional_escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from timeline.answers import ACTIONS, RECOMMENDATIONS
from timeline.glossary import (
    COMPENSATION_KINDS,
    COMPENSATION_STATUSES,
    ERRORS,
    FACTS,
    OPERATIONS,
    REFUND_TYPES,
    worded,
)

# The details a title is made of: shown in the title, not again among the entry's details.
TITLE_KEYS = ("fact_type", "error_code", "recommendation", "compensation_kind",
              "compensation_status", "action", "decision_status", "refund_type",
              "refund_amount", "requires_approval")


def _say(sentence: str, **facts) -> str:
    return mark_safe(conditional_escape(sentence) % {
        name: conditional_escape(value) for name, value in facts.items()})


def _fact(e, d):
    return _say(_("%(fact)s for order %(order)s"), fact=worded(d["fact_type"], FACTS),
                order=d.get("order_id", "—"))


def _refusal(e, d):
    return _say(_("%(op)s refused: %(code)s"), op=worded(d["op_type"], OPERATIONS),
                code=worded(d["error_code"], ERRORS))


def _case(e, d):
    if "recommendation" not in d:
        return e["title"]  # a case's resolution names no code
    return _say(_("Conflict case #%(case)s opened: %(recommendation)s"), case=e["id"],
                recommendation=worded(d["recommendation"], RECOMMENDATIONS))


def _compensation(e, d):
    if "compensation_kind" not in d:
        return e["title"]
    return _say(_("Compensation %(kind)s (%(status)s)"),
                kind=worded(d["compensation_kind"], COMPENSATION_KINDS),
                status=worded(d["compensation_status"], COMPENSATION_STATUSES))


def _refund(e, d):
    if "refund_type" in d:
        return _say(_("Refund %(refund)s received (%(type)s, %(amount)s)"),
                    refund=d.get("refund_id", "—"), type=worded(d["refund_type"], REFUND_TYPES),
                    amount=d.get("refund_amount", "—"))
    if "action" in d:
        sentence = (_("Refund decision: %(action)s, for an operator")
                    if d.get("requires_approval") else _("Refund decision: %(action)s"))
        return _say(sentence, action=worded(d["action"], ACTIONS))
    return e["title"]


def _review(e, d):
    if "action" not in d:
        return e["title"]
    sentence = (_("Refund decision rejected: %(action)s") if d.get("decision_status") == "REJECTED"
                else _("Refund decision approved: %(action)s"))
    return _say(sentence, action=worded(d["action"], ACTIONS))


TITLES = {"fact": _fact, "refusal": _refusal, "case": _case, "compensation": _compensation,
          "refund": _refund, "review": _review}


def entry_title(entry: dict):
    """The entry's title in words; a kind this module does not word keeps the domain's."""
    build = TITLES.get(entry["kind"])
    return build(entry, entry["details"]) if build else entry["title"]

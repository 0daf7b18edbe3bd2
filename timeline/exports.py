"""Lists as CSV: search results and every queue, with the filters the page was showing.

Rows stream out as they are read (`iterator`, by chunks), so a long list costs flat memory and
the first bytes leave at once. A spreadsheet runs a cell that starts with = + - @ (or a tab or
carriage return, which some read past) as a formula: such a cell gets a leading quote, so what
a customer typed into an order id is shown, never run (OWASP "CSV injection").

A file is written for the person exporting it: headers and values in their language (a code
as its word with the code in brackets, `waiting for approval (PENDING_APPROVAL)`, so a filter on
the code still finds it; a flag as yes or no in words), times in their zone
to the second with the offset (`2026-06-01T20:29:00+08:00`), and a UTF-8 byte order mark first,
without which Excel and LibreOffice in a Chinese locale read the file as GBK and show mojibake.
Both are fixed when the export starts: the rows stream after the view has returned.
"""

import csv
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone, translation
from django.utils.translation import gettext, pgettext_lazy

from coupons.ledger_reasons import reason_words
from coupons.redaction import visible
from coupons.write.payloads import money
from refunds.rule_labels import decided_rule, rule_words
from timeline import glossary
from timeline.answers import ACTIONS, RECOMMENDATIONS

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
BOM = "\ufeff"
CHUNK = 2000


def neutralised(value) -> str:
    text = "" if value is None else str(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


class _Echo:
    """csv.writer writes a row into this and gets the line back (Django's streaming recipe)."""

    def write(self, value):
        return value


@dataclass(frozen=True)
class Column:
    header: str  # the field's name, as the API names it
    value: Callable[[object], object]
    detail: str = ""  # a model's detail field: left out for readers who may not see it
    label: str = ""  # the header the reader reads (translated)


def coded(code, words: dict) -> str:
    """A code as a cell says it: its word, then the code in brackets; unknown, the code."""
    if not code or code not in words:
        return code or ""
    return f"{words[code][0]} ({code})"


def flag(value: bool) -> str:
    return gettext("yes") if value else gettext("no")


def local(moment, zone) -> str:
    if not isinstance(moment, datetime):
        return "" if moment is None else moment
    return timezone.localtime(moment, zone).isoformat(timespec="seconds")


def csv_lines(rows: Iterable, columns: list[Column]) -> Iterator[str]:
    """The file's lines; the headers' language and the times' zone are the current ones."""
    headers = [str(column.label or column.header) for column in columns]
    zone = timezone.get_current_timezone()
    # A cell read through the catalogue (a rule's label, a reason) is worded while the rows
    # stream, after the view returned: in the language the export started in.
    language = translation.get_language()

    def lines():
        writer = csv.writer(_Echo())
        yield BOM + writer.writerow(headers)
        for row in rows:
            with translation.override(language):
                cells = [neutralised(local(column.value(row), zone)) for column in columns]
            yield writer.writerow(cells)

    return lines()


def visible_columns(model, columns: list[Column], *, can_see_details: bool) -> list[Column]:
    """The columns the reader may see: a detail field is dropped as coupons.redaction does."""
    if not any(c.detail for c in columns):
        return columns
    shown = visible(model, {c.detail: True for c in columns if c.detail},
                    can_see_details=can_see_details)
    return [c for c in columns if not c.detail or c.detail in shown]


SEARCH_COLUMNS = [
    Column("coupon_id", lambda c: c.pk, label=pgettext_lazy("CSV header", "coupon")),
    Column("user_id", lambda c: c.user_id, label=pgettext_lazy("CSV header", "user")),
    Column("status", lambda c: coded(c.status, glossary.STATES),
           label=pgettext_lazy("CSV header", "status")),
    Column("version", lambda c: c.state_version,
           label=pgettext_lazy("CSV header", "state version")),
    Column("template", lambda c: c.template.code, label=pgettext_lazy("CSV header", "template")),
    Column("valid_until", lambda c: c.valid_until,
           label=pgettext_lazy("CSV header", "valid until")),
    Column("held_by_order", lambda c: c.locked_order_id or "",
           label=pgettext_lazy("CSV header", "held by order")),
    Column("open_case", lambda c: flag(c.has_open_case),
           label=pgettext_lazy("CSV header", "open case")),
    Column("updated_at", lambda c: c.updated_at, label=pgettext_lazy("CSV header", "last change")),
]
CASE_COLUMNS = [
    Column("case_id", lambda c: c.pk, label=pgettext_lazy("CSV header", "conflict case")),
    Column("coupon_id", lambda c: c.coupon_id, label=pgettext_lazy("CSV header", "coupon")),
    Column("status", lambda c: coded(c.status, glossary.CASE_STATUSES),
           label=pgettext_lazy("CSV header", "status")),
    Column("fact_type", lambda c: coded(c.fact_type, glossary.FACTS),
           label=pgettext_lazy("CSV header", "fact")),
    Column("order_id", lambda c: c.order_id, label=pgettext_lazy("CSV header", "order")),
    Column("payment_id", lambda c: c.payment_id, label=pgettext_lazy("CSV header", "payment")),
    Column("recommendation", lambda c: coded(c.recommendation, RECOMMENDATIONS),
           label=pgettext_lazy("CSV header", "recommendation")),
    Column("opened_at", lambda c: c.opened_at, label=pgettext_lazy("CSV header", "opened at")),
    Column("resolution", lambda c: c.resolution, label=pgettext_lazy("CSV header", "resolution")),
    Column("resolved_by", lambda c: c.resolved_by,
           label=pgettext_lazy("CSV header", "resolved by")),
    Column("resolved_at", lambda c: c.resolved_at,
           label=pgettext_lazy("CSV header", "resolved at")),
    Column("resolution_note", lambda c: c.resolution_note, detail="resolution_note",
           label=pgettext_lazy("CSV header", "resolution note")),
]
DECISION_COLUMNS = [
    Column("decision_id", lambda d: d.pk, label=pgettext_lazy("CSV header", "refund decision")),
    Column("coupon_id", lambda d: d.coupon_id, label=pgettext_lazy("CSV header", "coupon")),
    Column("status", lambda d: coded(d.status, glossary.DECISION_STATUSES),
           label=pgettext_lazy("CSV header", "status")),
    Column("action", lambda d: coded(d.action, ACTIONS),
           label=pgettext_lazy("CSV header", "action")),
    Column("order_id", lambda d: d.order_id, label=pgettext_lazy("CSV header", "order")),
    Column("refund_id", lambda d: d.refund_id, label=pgettext_lazy("CSV header", "refund")),
    Column("refund_amount", lambda d: money(d.refund_amount),
           label=pgettext_lazy("CSV header", "refund amount")),
    Column("risk_flag", lambda d: flag(d.risk_flag),
           label=pgettext_lazy("CSV header", "risk flagged")),
    Column("received_at", lambda d: d.received_at,
           label=pgettext_lazy("CSV header", "received at")),
    Column("reviewed_by", lambda d: d.reviewed_by,
           label=pgettext_lazy("CSV header", "reviewed by")),
    Column("reviewed_at", lambda d: d.reviewed_at,
           label=pgettext_lazy("CSV header", "reviewed at")),
    Column("executed_action", lambda d: coded(d.executed_action, ACTIONS),
           label=pgettext_lazy("CSV header", "executed action")),
    Column("rule_label", lambda d: rule_words(decided_rule(d)),
           label=pgettext_lazy("CSV header", "rule")),
    Column("policy_version", lambda d: d.policy_version and
           f"{d.policy_version.policy.code} v{d.policy_version.number}",
           label=pgettext_lazy("CSV header", "policy version")),
    Column("review_note", lambda d: d.review_note,
           label=pgettext_lazy("CSV header", "review note")),
]
COMPENSATION_COLUMNS = [
    Column("compensation_id", lambda c: c.pk, label=pgettext_lazy("CSV header", "compensation")),
    Column("coupon_id", lambda c: c.coupon_id, label=pgettext_lazy("CSV header", "coupon")),
    Column("status", lambda c: coded(c.status, glossary.COMPENSATION_STATUSES),
           label=pgettext_lazy("CSV header", "status")),
    Column("kind", lambda c: coded(c.kind, glossary.COMPENSATION_KINDS),
           label=pgettext_lazy("CSV header", "kind")),
    Column("order_id", lambda c: c.order_id, label=pgettext_lazy("CSV header", "order")),
    Column("amount", lambda c: money(c.amount), detail="amount",
           label=pgettext_lazy("CSV header", "amount")),
    Column("reason", lambda c: reason_words(c), detail="reason",
           label=pgettext_lazy("CSV header", "reason")),
    Column("proposed_by", lambda c: c.created_by, label=pgettext_lazy("CSV header", "proposed by")),
    Column("created_at", lambda c: c.created_at, label=pgettext_lazy("CSV header", "proposed at")),
    Column("decided_by", lambda c: c.decided_by, label=pgettext_lazy("CSV header", "decided by")),
    Column("decided_at", lambda c: c.decided_at, label=pgettext_lazy("CSV header", "decided at")),
    Column("decision_note", lambda c: c.decision_note, detail="decision_note",
           label=pgettext_lazy("CSV header", "decision note")),
]

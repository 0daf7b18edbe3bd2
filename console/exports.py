"""Lists as CSV: search results and every queue, with the filters the page was showing.

Rows stream out as they are read (`iterator`, by chunks), so a long list costs flat memory and
the first bytes leave at once. A spreadsheet runs a cell that starts with = + - @ (or a tab or
carriage return, which some read past) as a formula: such a cell gets a leading quote, so what
a customer typed into an order id is shown, never run (OWASP "CSV injection").
"""

import csv
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from coupons.redaction import visible
from coupons.write.payloads import iso, money

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
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
    header: str
    value: Callable[[object], object]
    detail: str = ""  # a model's detail field: left out for readers who may not see it


def csv_lines(rows: Iterable, columns: list[Column]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow([column.header for column in columns])
    for row in rows:
        yield writer.writerow([neutralised(column.value(row)) for column in columns])


def visible_columns(model, columns: list[Column], *, can_see_details: bool) -> list[Column]:
    """The columns the reader may see: a detail field is dropped as coupons.redaction does."""
    if not any(c.detail for c in columns):
        return columns
    shown = visible(model, {c.detail: True for c in columns if c.detail},
                    can_see_details=can_see_details)
    return [c for c in columns if not c.detail or c.detail in shown]


SEARCH_COLUMNS = [
    Column("coupon_id", lambda c: c.pk),
    Column("user_id", lambda c: c.user_id),
    Column("status", lambda c: c.status),
    Column("version", lambda c: c.state_version),
    Column("template", lambda c: c.template.code),
    Column("valid_until", lambda c: iso(c.valid_until)),
    Column("held_by_order", lambda c: c.locked_order_id or ""),
    Column("open_case", lambda c: "yes" if c.has_open_case else "no"),
    Column("updated_at", lambda c: iso(c.updated_at)),
]
CASE_COLUMNS = [
    Column("case_id", lambda c: c.pk),
    Column("coupon_id", lambda c: c.coupon_id),
    Column("status", lambda c: c.status),
    Column("fact_type", lambda c: c.fact_type),
    Column("order_id", lambda c: c.order_id),
    Column("payment_id", lambda c: c.payment_id),
    Column("recommendation", lambda c: c.recommendation),
    Column("opened_at", lambda c: iso(c.opened_at)),
    Column("resolution", lambda c: c.resolution),
    Column("resolved_by", lambda c: c.resolved_by),
    Column("resolved_at", lambda c: iso(c.resolved_at)),
    Column("resolution_note", lambda c: c.resolution_note, detail="resolution_note"),
]
DECISION_COLUMNS = [
    Column("decision_id", lambda d: d.pk),
    Column("coupon_id", lambda d: d.coupon_id),
    Column("status", lambda d: d.status),
    Column("action", lambda d: d.action),
    Column("order_id", lambda d: d.order_id),
    Column("refund_id", lambda d: d.refund_id),
    Column("refund_amount", lambda d: money(d.refund_amount)),
    Column("risk_flag", lambda d: "yes" if d.risk_flag else "no"),
    Column("received_at", lambda d: iso(d.received_at)),
    Column("reviewed_by", lambda d: d.reviewed_by),
    Column("reviewed_at", lambda d: iso(d.reviewed_at)),
    Column("executed_action", lambda d: d.executed_action),
]
COMPENSATION_COLUMNS = [
    Column("compensation_id", lambda c: c.pk),
    Column("coupon_id", lambda c: c.coupon_id),
    Column("status", lambda c: c.status),
    Column("kind", lambda c: c.kind),
    Column("order_id", lambda c: c.order_id),
    Column("amount", lambda c: money(c.amount), detail="amount"),
    Column("reason", lambda c: c.reason, detail="reason"),
    Column("proposed_by", lambda c: c.created_by),
    Column("created_at", lambda c: iso(c.created_at)),
    Column("decided_by", lambda c: c.decided_by),
    Column("decided_at", lambda c: iso(c.decided_at)),
]

"""The other two sides of reconciliation: the order and payment systems' own records.

The checks of checks.py compare what this service was told with what it did; an order that was
paid but never told us, or a fact the payment system never sent, is invisible there. Here the
order and payment systems' exports (CSV or JSON, the format in docs/operating.md) are compared
with the facts received and the bindings kept, so all four sides meet:

- PAID_WITHOUT_BINDING: the order system says the order used the coupon and a payment for it
  succeeded, but the order holds no binding (no lease was ever taken, or it was refused).
- FACT_NEVER_SENT: the payment system says a payment of a coupon order succeeded (or failed,
  or the order system says it closed), and no such fact reached the inbox.

Only orders that name a coupon matter: the coupon service has nothing to say about the rest.
A finding hangs on the coupon the order names; an order naming no coupon of ours is reported
by the command, not recorded.
"""

import csv
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from coupons.models import (
    FactType,
    FindingKind,
    OrderCoupon,
    OrderFact,
    Repair,
    Severity,
    UserCoupon,
)
from operations.reconcile.checks import Detected
from operations.reconcile.run import EXPORT_KINDS, record_batch
from operations.reconcile.summaries import summary

ORDER_FIELDS = ("order_id", "coupon_id", "status")
PAYMENT_FIELDS = ("payment_id", "order_id", "kind", "status")
ORDER_STATUSES = ("PENDING", "DEPOSIT_PAID", "PAID", "CLOSED")
PAYMENT_KINDS = {  # the payment system's kind → the fact it should have sent when it succeeded
    "PAYMENT": FactType.PAYMENT_SUCCEEDED,
    "DEPOSIT": FactType.DEPOSIT_PAID,
    "FINAL_PAYMENT": FactType.FINAL_PAYMENT_SUCCEEDED,
    "REFUND": FactType.REFUND_SUCCEEDED,
}
PAYING_KINDS = ("PAYMENT", "FINAL_PAYMENT")


class ExportUnreadable(Exception):
    """An export file that is not in the documented format (the command says which row)."""


@dataclass(frozen=True)
class ExportReport:
    found: list
    unknown_coupons: list  # (order id, coupon id) naming no coupon of ours
    recorded: tuple  # (new, still open, closed)


def read_export(path: str, fields: tuple) -> list[dict]:
    """Rows of a .json (an array of objects) or .csv (a header line) file, each with `fields`."""
    text = Path(path).read_text(encoding="utf-8")
    if path.endswith(".json"):
        rows = json.loads(text)
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise ExportUnreadable(f"{path}: expected a JSON array of objects")
    else:
        rows = list(csv.DictReader(text.splitlines()))
    for number, row in enumerate(rows, 1):
        missing = [name for name in fields if name not in row]
        if missing:
            raise ExportUnreadable(f"{path}: row {number} lacks {', '.join(missing)}")
    return [{name: ("" if value is None else str(value).strip()) for name, value in row.items()}
            for row in rows]


def compare_exports(orders: list[dict], payments: list[dict]) -> tuple[list, list]:
    """(what is wrong, orders naming an unknown coupon)."""
    claimed = {row["order_id"]: row for row in orders if row["coupon_id"]}
    coupons = {c["id"]: c for c in UserCoupon.objects.filter(
        pk__in={int(row["coupon_id"]) for row in claimed.values()
                if row["coupon_id"].isdigit()}).values("id", "status", "state_version")}
    bound = set(OrderCoupon.objects.filter(order_id__in=claimed)
                .values_list("order_id", flat=True))
    facts = defaultdict(set)  # order → {(fact type, payment or refund id)}
    for order_id, fact_type, payment_id, refund_id in OrderFact.objects.filter(
            order_id__in=claimed).values_list("order_id", "fact_type", "payment_id", "refund_id"):
        facts[order_id].add((fact_type, refund_id or payment_id))
        facts[order_id].add((fact_type, ""))
    paid_by = defaultdict(list)
    for row in payments:
        if row["order_id"] in claimed and row["status"] == "SUCCEEDED" \
                and row["kind"] in PAYING_KINDS:
            paid_by[row["order_id"]].append(row["payment_id"])

    found, unknown = [], []
    for order_id, order in sorted(claimed.items()):
        coupon = coupons.get(int(order["coupon_id"])) if order["coupon_id"].isdigit() else None
        if coupon is None:
            unknown.append((order_id, order["coupon_id"]))
            continue
        paid = paid_by.get(order_id) or (["(order system)"] if order["status"] == "PAID" else [])
        if paid and order_id not in bound:
            found.append(_finding(FindingKind.PAID_WITHOUT_BINDING, coupon, order_id, order_id,
                                  "paid_without_binding", {"payments": paid}))
        for fact_type, key in expected_facts(order, payments):
            if (fact_type, key) not in facts[order_id]:
                found.append(_finding(FindingKind.FACT_NEVER_SENT, coupon, order_id,
                                      f"{fact_type}:{key or order_id}", "fact_never_sent",
                                      {"fact_type": fact_type, "key": key}))
    return found, unknown


def expected_facts(order: dict, payments: list[dict]):
    """(fact type, payment or refund id, "" when the fact names only the order) the order and
    payment systems' records say this service should have heard."""
    for row in payments:
        if row["order_id"] != order["order_id"]:
            continue
        if row["status"] == "SUCCEEDED" and row["kind"] in PAYMENT_KINDS:
            key = "" if row["kind"] == "DEPOSIT" else row["payment_id"]
            yield PAYMENT_KINDS[row["kind"]], key
        elif row["status"] == "FAILED" and row["kind"] in PAYING_KINDS:
            yield FactType.PAYMENT_FAILED, ""
    if order["status"] == "CLOSED":
        yield FactType.ORDER_CLOSED, ""


def _finding(kind, coupon, order_id, subject, code, evidence) -> Detected:
    return Detected(
        kind=kind, severity=Severity.P1, coupon_id=coupon["id"], subject=subject,
        order_ids=(order_id,), repair=Repair.MANUAL_REVIEW,
        summary=summary(code, order=order_id, **({"fact": evidence["fact_type"]}
                                                 if "fact_type" in evidence else {})),
        evidence={"order_id": order_id, "coupon_status": coupon["status"], **evidence},
    )


def reconcile_exports(*, orders_path: str, payments_path: str, actor: str) -> ExportReport:
    """Compare, record the findings on the coupons the exports name (closing the export
    findings of those coupons that no longer hold), and report."""
    found, unknown = compare_exports(read_export(orders_path, ORDER_FIELDS),
                                     read_export(payments_path, PAYMENT_FIELDS))
    named = sorted({d.coupon_id for d in found}
                   | set(UserCoupon.objects.filter(findings__kind__in=EXPORT_KINDS,
                                                   findings__status="OPEN")
                         .values_list("id", flat=True)))
    coupons = list(UserCoupon.objects.filter(pk__in=named).order_by("id")
                   .values("id", "state_version"))
    recorded = (0, 0, 0)
    for coupon in coupons:
        mine = [d for d in found if d.coupon_id == coupon["id"]]
        counts = record_batch([coupon], mine, actor=actor, kinds=EXPORT_KINDS)
        recorded = tuple(a + b for a, b in zip(recorded, counts, strict=True))
    return ExportReport(found=found, unknown_coupons=unknown, recorded=recorded)

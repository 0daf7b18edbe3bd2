"""Four-sided reconciliation: the order and payment systems' exports beside the facts received
and the bindings kept (docs/operating.md). A paid order that never bound its coupon and a fact
never sent are findings; the sample files in docs/samples are in the documented format."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from coupons.models import FindingKind
from coupons.services import coupon_issue
from operations.reconcile.exports import ORDER_FIELDS, PAYMENT_FIELDS, read_export
from tests.conftest import lock
from tests.operations.reconciliation.conftest import open_findings, reconcile

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).resolve().parents[3] / "docs" / "samples"


def test_the_sample_exports_are_in_the_documented_format():
    orders = read_export(str(SAMPLES / "orders.csv"), ORDER_FIELDS)
    payments = read_export(str(SAMPLES / "payments.json"), PAYMENT_FIELDS)

    assert {row["status"] for row in orders} <= {"PENDING", "DEPOSIT_PAID", "PAID", "CLOSED"}
    assert {row["kind"] for row in payments} <= {"PAYMENT", "DEPOSIT", "FINAL_PAYMENT", "REFUND"}


def write_exports(tmp_path, orders: str, payments: list[dict]) -> tuple[str, str]:
    (tmp_path / "orders.csv").write_text(orders)
    (tmp_path / "payments.json").write_text(json.dumps(payments))
    return str(tmp_path / "orders.csv"), str(tmp_path / "payments.json")


def test_a_paid_order_without_a_binding_and_a_fact_never_sent_are_found(
        template, ctx, send, tmp_path):
    never_bound = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    told = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    silent = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    lock(told, ctx, order_id="ORD-2")
    send("PaymentSucceeded", order_id="ORD-2", payment_id="P-2")
    lock(silent, ctx, order_id="ORD-3")  # its payment never reached us
    orders, payments = write_exports(tmp_path, (
        "order_id,coupon_id,status\n"
        f"ORD-1,{never_bound.pk},PAID\nORD-2,{told.pk},PAID\nORD-3,{silent.pk},PAID\n"
        "ORD-4,,PAID\nORD-5,999999,PAID\n"), [
        {"payment_id": f"P-{n}", "order_id": f"ORD-{n}", "kind": "PAYMENT",
         "status": "SUCCEEDED", "amount": "270.00"} for n in range(1, 6)])
    out = StringIO()

    call_command("reconcile", orders=orders, payments=payments, stdout=out)

    found = {(f.kind, f.coupon_id, f.subject) for f in open_findings()
             if f.kind in (FindingKind.PAID_WITHOUT_BINDING, FindingKind.FACT_NEVER_SENT)}
    assert found == {
        ("PAID_WITHOUT_BINDING", never_bound.pk, "ORD-1"),
        ("FACT_NEVER_SENT", never_bound.pk, "PaymentSucceeded:P-1"),
        ("FACT_NEVER_SENT", silent.pk, "PaymentSucceeded:P-3"),
    }
    assert "order ORD-5 names coupon '999999', not one of ours" in out.getvalue()

    # The service's own run knows nothing of the exports: it leaves their findings alone.
    reconcile()
    assert len([f for f in open_findings() if f.kind == FindingKind.FACT_NEVER_SENT]) == 2

    # The payment service re-sends the fact: the next comparison closes that finding.
    send("PaymentSucceeded", order_id="ORD-3", payment_id="P-3")
    call_command("reconcile", orders=orders, payments=payments, stdout=StringIO())
    assert not [f for f in open_findings() if f.coupon_id == silent.pk]


def test_an_export_missing_a_column_is_refused_by_name(tmp_path):
    orders, payments = write_exports(tmp_path, "order_id,status\nORD-1,PAID\n", [])

    with pytest.raises(CommandError, match="row 1 lacks coupon_id"):
        call_command("reconcile", orders=orders, payments=payments, stdout=StringIO())


def test_orders_without_payments_is_refused():
    with pytest.raises(CommandError, match="go together"):
        call_command("reconcile", orders="orders.csv", stdout=StringIO())

"""Seals on the evidence rows outside the ledger: an edit past the triggers is named.

Each sealed table is edited the way an owner with triggers off would; `verify_seals` lists the
row and the coupon's check (invariant 8) names it. Legitimate moves (a redemption's
`succeeded`, an inbox outcome written once) keep their seals valid.
"""

import io
from dataclasses import replace
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from coupons.errors import StateConflict
from coupons.evidence.replay import coupon_check
from coupons.evidence.seals import seal_problem
from coupons.models import CommandRejection, InboxMessage, OrderCoupon, Redemption
from coupons.services import coupon_redeem, coupon_release
from coupons.write.context import LeaseProof
from refunds.models import Compensation, RefundCoupon
from refunds.services.compensation_decide import compensation_reject
from refunds.services.compensation_record import compensation_record
from refunds.services.refund_receive import refund_receive
from tests.app_role import as_owner
from tests.conftest import lock

pytestmark = pytest.mark.django_db


@pytest.fixture
def evidence(coupon, ctx, send):
    """A coupon locked (binding) and redeemed (redemption) for order-A, a refused release
    (refusal) and a fact about order-A (inbox message with its outcome)."""
    _, proof = lock(coupon, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P-1", ctx=ctx)
    stale = LeaseProof(order_id="order-B", token_hash="0" * 64, expected_version=2)
    with pytest.raises(StateConflict):
        coupon_release(coupon_id=coupon.pk, lease=stale, ctx=ctx)
    send("OrderClosed", order_id="order-A")
    coupon.refresh_from_db()
    return coupon


def edit_past_triggers(model, pk, **changes):
    """What the owner of the table can do: DISABLE TRIGGER USER, write, enable again."""
    table = model._meta.db_table
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        model.objects.filter(pk=pk).update(**changes)
        cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


EDITS = {
    "binding": (OrderCoupon, {"discount_amount": "1.00"}, "order coupon"),
    "redemption": (Redemption, {"payment_id": "p-forged"}, "redemption"),
    "refusal": (CommandRejection, {"error_code": "NOTHING_WRONG"}, "command rejection"),
    "inbox": (InboxMessage, {"outcome": {"action": "REDEEMED"}}, "inbox message"),
}


def test_every_evidence_row_is_sealed_when_written(evidence):
    rows = [*OrderCoupon.objects.all(), *Redemption.objects.all(),
            *CommandRejection.objects.all(), *InboxMessage.objects.all()]

    assert len(rows) == 4
    assert all(row.seal.startswith("t1:") and seal_problem(row) is None for row in rows)
    out = io.StringIO()
    call_command("verify_seals", stdout=out)
    assert out.getvalue() == "4 sealed rows checked: every seal holds.\n"


def test_the_inbox_outcome_is_sealed_with_the_row(evidence):
    message = InboxMessage.objects.get()

    assert message.outcome["action"] and seal_problem(message) is None


@pytest.mark.parametrize(("model", "changes", "named"), EDITS.values(), ids=EDITS)
def test_an_edited_evidence_row_fails_its_seal(evidence, api, broken_on_purpose,
                                              model, changes, named):
    broken_on_purpose.add(evidence.pk)
    row = model.objects.get()
    edit_past_triggers(model, row.pk, **changes)

    out = io.StringIO()
    with pytest.raises(CommandError, match="1 of 4 sealed rows fail their seal"):
        call_command("verify_seals", stdout=out)
    body = api.get(f"/api/v1/coupons/{evidence.pk}/check").json()

    assert out.getvalue() == (f"{model._meta.db_table} id={row.pk}: was changed after it was "
                              "sealed\n")
    assert body["ok"] is False
    sealed = next(item for item in body["invariants"] if item["number"] == 8)
    assert sealed["problems"] == [f"{named} {row.pk} was changed after it was sealed"]


def test_a_returned_redemption_keeps_its_seal(evidence):
    """`succeeded` moves on RETURN and REVERSE; the seal leaves it out."""
    redemption = Redemption.objects.get()
    edit_past_triggers(Redemption, redemption.pk, succeeded=False)
    redemption.refresh_from_db()

    assert seal_problem(redemption) is None
    edit_past_triggers(Redemption, redemption.pk, succeeded=True)
    assert coupon_check(evidence).ok


@pytest.fixture
def after_sale(evidence, ctx):
    """The coupon fully refunded (a refund decision that RETURNs it) and a money compensation
    recorded for its order, then rejected (resealed with the decision)."""
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P-1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    owed = compensation_record(kind=Compensation.Kind.ORDER_DISCOUNT_REFUND, order_id="order-A",
                               coupon=evidence, amount=Decimal("30.00"), reason="test",
                               actor="test")
    compensation_reject(compensation_id=owed.pk, note="paid by hand", ctx=replace(
        ctx, actor="user:second-operator"))
    evidence.refresh_from_db()
    return evidence


AFTER_SALE_EDITS = {
    "refund-decision": (RefundCoupon, {"action": "KEEP_USED"}, "refund coupon"),
    "compensation": (Compensation, {"amount": Decimal("300.00")}, "compensation"),
}


def test_decisions_and_compensations_stay_sealed_through_their_moves(after_sale):
    decision, compensation = RefundCoupon.objects.get(), Compensation.objects.get()

    assert (decision.status, compensation.status) == ("EXECUTED", "REJECTED")
    assert seal_problem(decision) is None and seal_problem(compensation) is None
    assert coupon_check(after_sale).ok


@pytest.mark.parametrize(("model", "changes", "named"), AFTER_SALE_EDITS.values(),
                         ids=AFTER_SALE_EDITS)
def test_an_edited_decision_fails_its_seal(after_sale, api, broken_on_purpose,
                                          model, changes, named):
    broken_on_purpose.add(after_sale.pk)
    row = model.objects.get()
    edit_past_triggers(model, row.pk, **changes)

    out = io.StringIO()
    with pytest.raises(CommandError, match="1 of 6 sealed rows fail their seal"):
        call_command("verify_seals", stdout=out)
    body = api.get(f"/api/v1/coupons/{after_sale.pk}/check").json()

    assert out.getvalue() == (f"{model._meta.db_table} id={row.pk}: was changed after it was "
                              "sealed\n")
    sealed = next(item for item in body["invariants"] if item["number"] == 8)
    assert sealed["problems"] == [f"{named} {row.pk} was changed after it was sealed"]

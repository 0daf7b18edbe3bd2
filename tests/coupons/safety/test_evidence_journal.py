"""The evidence rows beside the ledger are journaled: an edit past the triggers is named.

Each journaled table (order bindings, redemptions, refusals, refund decisions, compensations,
and the ledger itself) is edited the way an owner with triggers off would; `verify_journal`
names the row and the first column that differs, and the coupon's check (invariant 9) too.
Legitimate moves (a redemption's `succeeded`, a decision's status) are entries of their own.
Inbox messages are journaled too (invariant 8 folds the ones about the coupon's orders); a
message retention deleted ends with prune's `pruned` entry, one deleted otherwise is named.
"""

import io
import json
from dataclasses import replace
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from coupons.errors import StateConflict
from coupons.evidence.replay import coupon_check
from coupons.evidence.tips import journal_tip
from coupons.models import (
    CommandRejection,
    CouponOperation,
    InboxMessage,
    JournalEntry,
    OrderCoupon,
    Redemption,
)
from coupons.services import coupon_redeem, coupon_release
from coupons.write.context import LeaseProof
from operations.retention import retention_prune
from refunds.models import Compensation, RefundCoupon
from refunds.services.compensation_decide import compensation_reject
from refunds.services.compensation_record import compensation_record
from refunds.services.refund_receive import refund_receive
from tests.app_role import as_owner, past_the_triggers
from tests.conftest import lock
from tests.db_clock import aged

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


def verify_journal() -> tuple[str, str]:
    out = io.StringIO()
    try:
        call_command("verify_journal", stdout=out)
    except CommandError as error:
        return out.getvalue(), str(error)
    return out.getvalue(), ""


def journal_of(row) -> list[JournalEntry]:
    return list(JournalEntry.objects.filter(subject=row._meta.label_lower, subject_id=row.pk)
                .order_by("id"))


EDITS = {
    "binding": (OrderCoupon, {"discount_amount": Decimal("1.00")}, "order coupon",
                'discount_amount is "1.00", its journal says "30.00"'),
    "redemption": (Redemption, {"payment_id": "p-forged"}, "redemption",
                   'payment_id is "p-forged", its journal says "P-1"'),
    "refusal": (CommandRejection, {"error_code": "NOTHING_WRONG"}, "command rejection",
                'error_code is "NOTHING_WRONG", its journal says "INVALID_STATE"'),
}


def test_every_evidence_row_is_written_with_its_journal_entry(evidence):
    rows = [*CouponOperation.objects.all(), *OrderCoupon.objects.all(),
            *Redemption.objects.all(), *CommandRejection.objects.all()]

    assert len(rows) == 3 + 1 + 1 + 1  # ISSUE, LOCK, REDEEM; binding; redemption; refusal
    assert all(len(journal_of(row)) == 1 for row in rows)
    assert verify_journal() == (
        "Every journal entry holds and every journaled row is its fold.\n", "")
    assert coupon_check(evidence).ok


def test_an_inbox_message_and_its_outcome_are_journal_entries(evidence):
    message = InboxMessage.objects.get()

    assert [(entry.kind, entry.actor) for entry in journal_of(message)] == [
        ("received", message.sender_scope), ("processed", message.sender_scope)]
    assert json.loads(journal_of(message)[1].content)["row"] == {"outcome": message.outcome}
    assert message.outcome["action"] and verify_journal()[1] == ""


@pytest.mark.parametrize(("model", "changes", "named", "difference"), EDITS.values(), ids=EDITS)
def test_an_edited_evidence_row_is_named_by_its_journal(evidence, api, broken_on_purpose,
                                                        model, changes, named, difference):
    broken_on_purpose.add(evidence.pk)
    row = model.objects.get()
    edit_past_triggers(model, row.pk, **changes)

    out, failed = verify_journal()
    body = api.get(f"/api/v1/coupons/{evidence.pk}/check").json()

    assert failed == "1 journal entries or rows fail."
    assert out == f"{model._meta.label_lower} id={row.pk}: {difference}\n"
    assert body["ok"] is False
    journaled = next(item for item in body["invariants"] if item["number"] == 9)
    assert journaled["problems"] == [f"{named} {row.pk}: {difference}"]


def test_an_edited_ledger_row_is_named_by_its_journal(evidence, broken_on_purpose):
    broken_on_purpose.add(evidence.pk)
    redeem = CouponOperation.objects.get(op_type="REDEEM")
    edit_past_triggers(CouponOperation, redeem.pk, payment_id="P-other")

    out, failed = verify_journal()

    assert out == (f"coupons.couponoperation id={redeem.pk}: payment_id is \"P-other\", its "
                   "journal says \"P-1\"\n")
    assert failed


def test_an_edited_inbox_message_is_named_by_its_journal(evidence, api, broken_on_purpose):
    broken_on_purpose.add(evidence.pk)
    message = InboxMessage.objects.get()
    edit_past_triggers(InboxMessage, message.pk, outcome={"action": "REDEEMED"})

    out, failed = verify_journal()
    body = api.get(f"/api/v1/coupons/{evidence.pk}/check").json()

    said = 'outcome is {"action": "REDEEMED"}, its journal says {"action": "'
    assert out.startswith(f"coupons.inboxmessage id={message.pk}: {said}") and failed
    journaled = next(item for item in body["invariants"] if item["number"] == 8)
    assert [problem.startswith(f"inbox message {message.pk}: {said}")
            for problem in journaled["problems"]] == [True]


@pytest.fixture
def repeat(evidence, send) -> InboxMessage:
    """The same fact again under another message id: a de-dup row no fact names, which
    retention may delete once it is old."""
    send("OrderClosed", order_id="order-A")
    return InboxMessage.objects.latest("pk")


def test_an_inbox_message_deleted_past_retention_is_named(repeat):
    message = repeat
    with past_the_triggers():
        InboxMessage.objects.filter(pk=message.pk).delete()

    assert verify_journal() == (
        f"coupons.inboxmessage id={message.pk}: has journal entries but no row\n",
        "1 journal entries or rows fail.")


def test_an_inbox_message_retention_deleted_is_expected_gone(repeat):
    """Prune deletes it with its `pruned` entry in one statement: its entries stay."""
    message = repeat
    aged(InboxMessage, [message.pk], "received_at", days=31)

    run = retention_prune()

    assert run.inbox_deleted == 1 and not InboxMessage.objects.filter(pk=message.pk).exists()
    assert [entry.kind for entry in journal_of(message)] == ["received", "processed", "pruned"]
    assert verify_journal() == (
        "Every journal entry holds and every journaled row is its fold.\n", "")


def test_a_returned_redemption_is_a_journal_step(evidence, broken_on_purpose):
    """`succeeded` moves on RETURN and REVERSE, each move an entry; a move past the services
    is named."""
    broken_on_purpose.add(evidence.pk)
    redemption = Redemption.objects.get()
    edit_past_triggers(Redemption, redemption.pk, succeeded=False)

    problems = coupon_check(evidence, full=True).violations[9]

    assert problems == [f"redemption {redemption.pk}: succeeded is false, its journal says true"]


@pytest.fixture
def after_sale(evidence, ctx):
    """The coupon fully refunded (a refund decision that RETURNs it) and a money compensation
    recorded for its order, then rejected."""
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P-1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    owed = compensation_record(kind=Compensation.Kind.ORDER_DISCOUNT_REFUND, order_id="order-A",
                               coupon=evidence, amount=Decimal("30.00"), reason="test",
                               actor="test")
    compensation_reject(compensation_id=owed.pk, note="paid by hand",
                        seen_entry=journal_tip(Compensation, owed.pk), ctx=replace(
        ctx, actor="user:second-operator"))
    evidence.refresh_from_db()
    return evidence


def test_the_moves_of_decisions_redemptions_and_compensations_are_journal_steps(after_sale):
    decision, compensation = RefundCoupon.objects.get(), Compensation.objects.get()
    redemption = Redemption.objects.get()

    assert (decision.status, compensation.status) == ("EXECUTED", "REJECTED")
    assert [entry.kind for entry in journal_of(redemption)] == ["recorded", "returned"]
    assert [entry.kind for entry in journal_of(compensation)] == ["recorded", "rejected"]
    assert coupon_check(after_sale).ok
    assert verify_journal()[1] == ""

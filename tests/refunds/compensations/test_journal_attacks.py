"""A decision is taken on what its journal says was written, not on the row as it is now.

The application's login may UPDATE only the columns the services move (column grants), every
UPDATE is journaled by the database as the step the transaction declares, and a step may move
only its own columns: each edit below, sent with raw SQL as `coupon_app`, is refused by the
grant or a trigger. The same edit past the triggers (the owner's login) is what the
journal catches: an honest operator then decides, the decision is refused with
EVIDENCE_MISMATCH, nothing is appended to the ledger, and the coupon's check names the
difference (invariant 9).
"""

import pytest
from django.contrib.auth.models import Group, User
from django.db import DatabaseError, connection, transaction

from coupons.evidence.replay import coupon_check
from coupons.models import (
    CommandRejection,
    CouponOperation,
    JournalEntry,
    OperationType,
    UserCoupon,
)
from coupons.services import coupon_redeem
from refunds.models import Compensation, RefundCoupon
from tests.app_role import past_the_triggers
from tests.conftest import lock
from tests.refunds.compensations.conftest import approve, error, ok, propose
from tests.refunds.conftest import refund, shown
from tests.refunds.test_refunds_api import pending
from tests.timeline.test_team_lists import bulk

pytestmark = pytest.mark.django_db


def raw(sql, *params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


# A column without a grant, a trigger that holds a pending row, or the journal's step rules.
REFUSED = "permission denied|pgtrigger: Cannot|journal: "


def forged(sql, *params):
    """Refused to the app's login, whatever step it declares (none, or the approval that
    comes next); written past the triggers by the owner's."""
    for step in ("", "approved"):
        with pytest.raises(DatabaseError, match=REFUSED), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('coupons.step.refunds_compensation', %s, true),"
                               " set_config('coupons.step.refunds_refundcoupon', %s, true)",
                               [step, step])
            raw(sql, *params)
    with past_the_triggers():
        return raw(sql, *params)


def journal_problems(coupon_id):
    return coupon_check(UserCoupon.objects.get(pk=coupon_id)).violations.get(9, [])


def test_a_proposed_amount_raised_by_update_is_refused_at_the_approval(
        alice, bob, redeemed, broken_on_purpose):
    proposal = ok(propose(alice, redeemed, amount="20.00"), 201)
    assert forged("UPDATE refunds_compensation SET amount = 2000.00 WHERE id = %s",
               proposal["id"]) == 1
    broken_on_purpose.add(redeemed.coupon_id)

    details = error(approve(bob, proposal["id"], note="fine"), 409, "EVIDENCE_MISMATCH")

    assert details["table"] == "refunds.compensation" and details["id"] == proposal["id"]
    assert details["problem"] == 'amount is "2000.00", its journal says "20.00"'
    assert Compensation.objects.get().status == "PROPOSED"
    assert not CouponOperation.objects.filter(op_type=OperationType.COMPENSATE).exists()
    assert CommandRejection.objects.filter(error_code="EVIDENCE_MISMATCH",
                                           actor="user:bob").count() == 1
    assert journal_problems(redeemed.coupon_id) == [
        f'compensation {proposal["id"]}: amount is "2000.00", its journal says "20.00"']


def test_a_proposer_renamed_by_update_cannot_approve_their_own_proposal(
        alice, redeemed, broken_on_purpose):
    proposal = ok(propose(alice, redeemed, amount="20.00"), 201)
    forged("UPDATE refunds_compensation SET created_by = 'user:op2' WHERE id = %s", proposal["id"])
    broken_on_purpose.add(redeemed.coupon_id)

    details = error(approve(alice, proposal["id"], note="mine"), 409, "EVIDENCE_MISMATCH")

    assert details["problem"] == 'created_by is "user:op2", its journal says "user:alice"'
    assert Compensation.objects.get().status == "PROPOSED"


def test_an_honest_approval_names_the_proposal_entry_it_approves(alice, bob, redeemed):
    proposal = ok(propose(alice, redeemed, amount="20.00"), 201)

    ok(approve(bob, proposal["id"], note="fine"))

    first, second = JournalEntry.objects.filter(subject="refunds.compensation",
                                                subject_id=proposal["id"]).order_by("id")
    assert (first.kind, first.actor, first.parent_hash) == ("proposed", "user:alice", None)
    assert (second.kind, second.actor) == ("approved", "user:bob")
    assert second.parent_hash == first.content_hash
    assert '"amount":"20.00"' in first.content and '"amount"' not in second.content
    assert journal_problems(redeemed.coupon_id) == []


def test_a_manual_review_turned_into_a_return_by_update_is_not_executed(
        operator, coupon, ctx, broken_on_purpose):
    decision = pending(coupon, ctx)
    forged("UPDATE refunds_refundcoupon SET action = 'RETURN', risk_flag = false, "
        "requires_approval = false WHERE id = %s", decision.pk)
    broken_on_purpose.add(coupon.pk)

    answer = operator.post(f"/api/v1/refunds/{decision.pk}/approve",
                           {"note": "ok", "seen_entry": shown(decision.pk)},
                           format="json", HTTP_IDEMPOTENCY_KEY="approve-1")

    assert answer.status_code == 409, answer.json()
    assert answer.json()["error"]["code"] == "EVIDENCE_MISMATCH"
    assert answer.json()["error"]["details"]["problem"] == (
        "risk_flag is false, its journal says true")
    assert RefundCoupon.objects.get(pk=decision.pk).status == "PENDING_APPROVAL"
    assert not CouponOperation.objects.filter(op_type=OperationType.RETURN).exists()
    assert journal_problems(coupon.pk) == [
        f"refund coupon {decision.pk}: risk_flag is false, its journal says true"]


def test_bulk_approve_in_the_console_refuses_an_edited_decision(
        client, coupon, ctx, broken_on_purpose):
    decision = pending(coupon, ctx)
    forged("UPDATE refunds_refundcoupon SET action = 'RETURN' WHERE id = %s", decision.pk)
    broken_on_purpose.add(coupon.pk)
    olga = User.objects.create_user("olga")
    olga.groups.add(Group.objects.get(name="operator"))
    client.force_login(olga)

    answer = bulk(client, "decision_bulk", [decision.pk], "approve")

    assert "EVIDENCE_MISMATCH" in answer.content.decode()
    assert RefundCoupon.objects.get(pk=decision.pk).status == "PENDING_APPROVAL"
    assert coupon_check(coupon).ok is False


def test_every_move_of_a_decision_is_an_entry_chained_to_the_one_before(operator, coupon, ctx):
    decision = pending(coupon, ctx)
    answer = operator.post(f"/api/v1/refunds/{decision.pk}/approve",
                           {"note": "verified", "action": "RETURN",
                            "seen_entry": shown(decision.pk)}, format="json",
                           HTTP_IDEMPOTENCY_KEY="approve-1")
    assert answer.status_code == 200

    entries = list(JournalEntry.objects.filter(subject="refunds.refundcoupon",
                                               subject_id=decision.pk).order_by("id"))
    assert [entry.kind for entry in entries] == ["received", "recommended", "approved"]
    assert [entry.parent_hash for entry in entries] == [
        None, entries[0].content_hash, entries[1].content_hash]
    assert journal_problems(coupon.pk) == []


def test_a_waiting_refund_edited_by_update_is_not_decided_when_the_redemption_comes(
        coupon, ctx, broken_on_purpose):
    _, proof = lock(coupon, ctx, order_id="order-A")
    [decision] = refund(ctx, "r-early").decisions
    assert decision.status == "AWAITING_REDEMPTION"
    forged("UPDATE refunds_refundcoupon SET refund_amount = 2700.00 WHERE id = %s", decision.pk)
    broken_on_purpose.add(coupon.pk)

    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="pay-order-A", ctx=ctx)

    assert UserCoupon.objects.get(pk=coupon.pk).status == "USED"  # the payment still counts
    assert RefundCoupon.objects.get(pk=decision.pk).status == "AWAITING_REDEMPTION"
    assert journal_problems(coupon.pk) == [
        f'refund coupon {decision.pk}: refund_amount is "2700.00", its journal says "270.00"']

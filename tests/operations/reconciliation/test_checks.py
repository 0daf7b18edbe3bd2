"""Each reconciliation check (docs/operating.md) on a database seeded with its fault finds it, with
its severity; honest histories made through the services find nothing."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings

from coupons.evidence.journal import existing_entries
from coupons.evidence.tips import journal_tip
from coupons.models import FactType, Finding, JournalEntry, OutboxEvent, UserCoupon
from coupons.services import coupon_issue, coupon_redeem, coupon_release
from operations.relay import Relay
from refunds.models import Compensation, RefundCoupon, ReturnPolicyVersion
from refunds.services.refund_receive import refund_receive
from tests.app_role import past_the_triggers
from tests.conftest import lock
from tests.coupons.safety.breakage import (
    lock_b_proof,
    redeemed,
    taken_over,
    two_successful_redemptions,
    used_without_a_redemption,
    version_gap,
)
from tests.db_clock import aged
from tests.operations.reconciliation.conftest import (
    fact_without_handler,
    found,
    open_findings,
    reconcile,
)

pytestmark = pytest.mark.django_db

GRACE = timedelta(seconds=settings.COUPONS["RECONCILE_UNPUBLISHED_GRACE_SECONDS"])


def issue(template, ctx, user="u1"):
    return coupon_issue(template_id=template.pk, user_id=user, ctx=ctx).coupon


def honest_histories(template, ctx, send):
    """One coupon per path the services take, facts delivered through the inbox."""
    issue(template, ctx)
    paid = issue(template, ctx)
    lock(paid, ctx, order_id="paid")
    send(FactType.PAYMENT_SUCCEEDED, order_id="paid", payment_id="P-paid")
    closed = issue(template, ctx)
    lock(closed, ctx, order_id="closed")
    send(FactType.ORDER_CLOSED, order_id="closed")
    refunded = issue(template, ctx)
    lock(refunded, ctx, order_id="refunded")
    send(FactType.PAYMENT_SUCCEEDED, order_id="refunded", payment_id="P-ref")
    send(FactType.REFUND_SUCCEEDED, order_id="refunded", payment_id="P-ref", refund_id="R1",
         refund_amount="270.00", refund_type="FULL")
    # The late-payment incident: A's payment comes after its lease moved to B; a case is opened.
    incident, _ = taken_over(template, ctx)
    send(FactType.PAYMENT_SUCCEEDED, order_id="order-A", payment_id="P-A")
    send(FactType.PAYMENT_SUCCEEDED, order_id="order-B", payment_id="P-B")
    return [paid, closed, refunded, incident]


def test_honest_histories_find_nothing(template, ctx, send, clock):
    paid, closed, refunded, incident = honest_histories(template, ctx, send)
    assert UserCoupon.objects.get(pk=paid.pk).status == "USED"
    assert UserCoupon.objects.get(pk=refunded.pk).status == "AVAILABLE"  # returned

    run = reconcile()

    assert (run.coupons_checked, run.found_new, run.still_open, run.closed) == (5, 0, 0, 0)
    assert Finding.objects.count() == 0


def test_honest_histories_find_nothing_once_the_relay_published(template, ctx, send, clock,
                                                              broker_queue):
    honest_histories(template, ctx, send)
    relay = Relay(exchange=broker_queue.exchange)
    while relay.run_batch().published:
        pass
    relay.close()
    assert not OutboxEvent.objects.filter(published_at__isnull=True).exists()
    clock.advance(seconds=GRACE.total_seconds() * 2)

    assert reconcile().found_new == 0


def test_a_paid_order_whose_coupon_stayed_locked_is_a_compensating_redeem(coupon, ctx):
    lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.PAYMENT_SUCCEEDED, payment_id="P-A")

    reconcile()

    [finding] = open_findings()
    assert (finding.kind, finding.severity, finding.repair) == (
        "PAID_NOT_REDEEMED", "P1", "COMPENSATING_REDEEM")
    assert finding.coupon_id == coupon.pk and finding.order_ids == ["order-A"]
    assert finding.evidence["payment_id"] == "P-A"
    assert finding.evidence["coupon_status"] == "LOCKED"


def test_a_paid_order_whose_coupon_went_back_available_is_a_compensating_redeem(coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx, reason="lease scanner")
    fact_without_handler("order-A", FactType.PAYMENT_SUCCEEDED, payment_id="P-A")

    reconcile()

    assert found(coupon) == {("PAID_NOT_REDEEMED", "P1")}
    assert open_findings()[0].evidence["coupon_status"] == "AVAILABLE"


def test_a_paid_order_whose_coupon_another_order_holds_needs_a_person(template, ctx):
    coupon, _ = taken_over(template, ctx)
    fact_without_handler("order-A", FactType.PAYMENT_SUCCEEDED, payment_id="P-A")

    reconcile()

    [finding] = open_findings()
    assert (finding.kind, finding.repair) == ("PAID_NOT_REDEEMED", "MANUAL_REVIEW")
    assert "held by order order-B" in finding.summary


def test_an_order_closed_unpaid_whose_coupon_stayed_locked_is_a_release(coupon, ctx):
    lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)

    reconcile()

    [finding] = open_findings()
    assert (finding.kind, finding.severity, finding.repair) == (
        "CLOSED_STILL_LOCKED", "P2", "RELEASE")
    assert finding.subject == "order-A"


def test_a_presale_order_whose_final_payment_failed_keeps_its_coupon(coupon, ctx):
    lock(coupon, ctx, order_id="presale")
    fact_without_handler("presale", FactType.DEPOSIT_PAID)
    fact_without_handler("presale", FactType.PAYMENT_FAILED)

    assert reconcile().found_new == 0


def test_used_without_a_redemption_is_a_p0_ghost(template, ctx, broken_on_purpose):
    coupon = used_without_a_redemption(template, ctx)
    broken_on_purpose.add(coupon.pk)

    reconcile()

    assert found(coupon) == {("GHOST_REDEMPTION", "P0")}
    assert "0 successful redemptions" in open_findings()[0].summary


def test_used_with_two_redemptions_is_a_ghost_and_a_double_consumption(
        template, ctx, broken_on_purpose):
    coupon = two_successful_redemptions(template, ctx)
    broken_on_purpose.add(coupon.pk)

    reconcile()

    assert found(coupon) == {("GHOST_REDEMPTION", "P0"), ("DOUBLE_CONSUMPTION", "P0")}


def test_a_coupon_consumed_by_two_paid_orders_is_a_p0_double_consumption(template, ctx):
    coupon, _ = taken_over(template, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=lock_b_proof(coupon), payment_id="P-B", ctx=ctx)
    fact_without_handler("order-B", FactType.PAYMENT_SUCCEEDED, payment_id="P-B")
    # A's payment stored, but no conflict case opened for it: no one will refund A's discount.
    fact_without_handler("order-A", FactType.PAYMENT_SUCCEEDED, payment_id="P-A")

    reconcile()

    [finding] = open_findings()
    assert (finding.kind, finding.severity) == ("DOUBLE_CONSUMPTION", "P0")
    assert finding.order_ids == ["order-A", "order-B"]
    assert finding.evidence["orders"] == {"order-A": "P-A", "order-B": "P-B"}


def test_an_order_whose_redemption_a_refund_returned_no_longer_consumes_the_coupon(
    template, ctx, send,
):
    """A paid, refunded order keeps its payment fact and its binding, but its redemption was
    undone: the paid order that redeemed the coupon after it is its only consumer."""
    coupon = issue(template, ctx)
    lock(coupon, ctx, order_id="order-A")
    send(FactType.PAYMENT_SUCCEEDED, order_id="order-A", payment_id="P-A")
    send(FactType.REFUND_SUCCEEDED, order_id="order-A", payment_id="P-A", refund_id="R1",
         refund_amount="270.00", refund_type="FULL")
    assert UserCoupon.objects.get(pk=coupon.pk).status == "AVAILABLE"  # returned
    lock(coupon, ctx, order_id="order-B")
    send(FactType.PAYMENT_SUCCEEDED, order_id="order-B", payment_id="P-B")
    assert UserCoupon.objects.get(pk=coupon.pk).status == "USED"

    run = reconcile()

    assert (run.found_new, open_findings()) == (0, [])


def executed_return_without_its_command(coupon) -> RefundCoupon:
    """The decision moved to EXECUTED RETURN, but coupon_return never ran."""
    redemption = coupon.redemptions.get(succeeded=True)
    # The row and its journal as a migration would write them (past the triggers: a decision
    # opens AWAITING_REDEMPTION to everyone else).
    with past_the_triggers():
        decision = RefundCoupon.objects.create(
            refund_id="R1", order_id=redemption.order_id, payment_id=redemption.payment_id,
            coupon=coupon, redemption=redemption, refund_type="FULL",
            refund_amount=Decimal("270.00"), action="RETURN", executed_action="RETURN",
            status="EXECUTED", created_by="test", received_at=coupon.updated_at,
            policy_version=ReturnPolicyVersion.objects.get(policy__code="default", number=1),
            rule_label="full refund returns the coupon",
        )
        # Its journal says the same: the fault is the missing RETURN, not the evidence.
        JournalEntry.objects.bulk_create(existing_entries(RefundCoupon, [decision]))
    return decision


def test_a_return_decision_whose_coupon_stayed_used_is_a_redrive(template, ctx):
    coupon = redeemed(template, ctx)
    decision = executed_return_without_its_command(coupon)

    reconcile()

    [finding] = open_findings()
    assert (finding.kind, finding.severity, finding.repair) == (
        "RETURN_NOT_ADVANCED", "P1", "REDRIVE_RETURN")
    assert finding.subject == f"refund-decision:{decision.pk}"


def test_a_return_whose_event_stayed_unpublished_is_a_redrive(template, ctx, clock):
    coupon = redeemed(template, ctx)
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    assert reconcile().found_new == 0  # the relay has its grace to publish it

    clock.advance(seconds=GRACE.total_seconds() + 1)
    reconcile()

    [finding] = open_findings()
    assert (finding.kind, finding.severity, finding.repair) == (
        "RETURN_EVENT_UNPUBLISHED", "P2", "REDRIVE_EVENT")
    returned = RefundCoupon.objects.get(refund_id="R1").operation
    assert finding.evidence["event_id"] == returned.outbox_event.pk
    assert finding.coupon_id == coupon.pk


def test_a_ledger_version_gap_is_a_p0(template, ctx, broken_on_purpose):
    coupon = version_gap(template, ctx)
    broken_on_purpose.add(coupon.pk)

    reconcile()

    assert found(coupon) == {("LEDGER_GAP", "P0")}
    assert open_findings()[0].evidence["gaps"] == ["v2 expected, row v3→v4"]



def test_honest_presale_histories_find_nothing(clock, send):
    """Deposit locks, final payment redeems, expires (STRICT) or leaves a compensation
    (SUBSTITUTE without a substitute); a closed presale order releases."""
    from tests.coupons.events.test_presale import (
        VALID_UNTIL,
        deposit,
        final_payment,
        presale_template,
    )
    from tests.coupons.events.test_presale import issue as issue_presale

    orders = {"honors": "LOCK_HONORS", "strict": "STRICT", "substitute": "SUBSTITUTE",
              "closed": "LOCK_HONORS"}
    for order, strategy in orders.items():
        deposit(send, issue_presale(presale_template(f"ps-{order}", strategy)), order_id=order)
    send(FactType.ORDER_CLOSED, order_id="closed")
    clock.set(VALID_UNTIL + timedelta(hours=1))
    for order in ("honors", "strict", "substitute"):
        final_payment(send, order_id=order, payment_id=f"FP-{order}")
    assert sorted(UserCoupon.objects.values_list("status", flat=True)) == [
        "AVAILABLE", "EXPIRED", "EXPIRED", "USED"]

    assert reconcile().found_new == 0


def test_a_return_whose_event_was_published_then_pruned_is_not_a_finding(
        template, ctx, clock, broker_queue):
    from django.core.management import call_command

    coupon = redeemed(template, ctx)
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    relay = Relay(exchange=broker_queue.exchange)
    relay.run_batch()
    relay.close()
    # Published a window and a day ago, on the database's clock, which prune reads.
    aged(OutboxEvent, OutboxEvent.objects.values_list("pk", flat=True), "published_at",
         days=settings.COUPONS["OUTBOX_RETENTION_DAYS"] + 1)
    call_command("prune")
    assert not OutboxEvent.objects.filter(coupon=coupon).exists()

    assert reconcile().found_new == 0


def test_a_return_whose_event_is_missing_without_a_prune_needs_a_person(
        template, ctx, broken_on_purpose):
    coupon = redeemed(template, ctx)
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    returned = RefundCoupon.objects.get(refund_id="R1").operation
    # A hand-made delete past the outbox's guards (on PostgreSQL only a superuser gets past).
    with past_the_triggers():
        OutboxEvent.objects.filter(operation=returned).delete()
    broken_on_purpose.add(coupon.pk)

    reconcile()

    [finding] = open_findings()
    assert (finding.kind, finding.repair) == ("RETURN_EVENT_UNPUBLISHED", "MANUAL_REVIEW")
    assert "it has no outbox event" in finding.summary


def test_an_order_that_locked_again_after_a_failed_payment_is_not_a_release(
        coupon, ctx, send, clock):
    lock(coupon, ctx, order_id="order-A")
    send(FactType.PAYMENT_FAILED, order_id="order-A")  # released by its handler
    clock.advance(minutes=1)
    lock(coupon, ctx, order_id="order-A")  # the buyer tries another card

    assert reconcile().found_new == 0


def test_an_order_closed_after_locking_again_is_a_release(coupon, ctx, send, clock):
    lock(coupon, ctx, order_id="order-A")
    send(FactType.PAYMENT_FAILED, order_id="order-A")
    clock.advance(minutes=1)
    lock(coupon, ctx, order_id="order-A")
    clock.advance(minutes=1)
    fact_without_handler("order-A", FactType.ORDER_CLOSED)

    reconcile()

    assert found(coupon) == {("CLOSED_STILL_LOCKED", "P2")}
    assert open_findings()[0].evidence["facts"] == ["OrderClosed"]


def test_an_order_that_switched_coupons_at_checkout_is_not_a_finding(template, ctx, send):
    first, second = issue(template, ctx), issue(template, ctx)
    _, proof = lock(first, ctx, order_id="order-A")
    coupon_release(coupon_id=first.pk, lease=proof, ctx=ctx, reason="buyer chose another")
    lock(second, ctx, order_id="order-A")
    send(FactType.PAYMENT_SUCCEEDED, order_id="order-A", payment_id="P-A")
    assert UserCoupon.objects.get(pk=second.pk).status == "USED"

    assert reconcile().found_new == 0


def test_a_return_an_approved_compensation_reversed_is_not_a_redrive(template, ctx):
    from coupons.models import OperationType
    from coupons.services import CommandContext
    from refunds.services.compensation_decide import compensation_approve
    from refunds.services.compensation_propose import compensation_propose

    coupon = redeemed(template, ctx)
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    wrong_return = coupon.operations.get(op_type=OperationType.RETURN)
    proposal = compensation_propose(coupon_id=coupon.pk, operation_id=wrong_return.pk,
                                    reason="refund was cancelled",
                                    ctx=CommandContext(actor="alice"))
    compensation_approve(compensation_id=proposal.pk, ctx=CommandContext(actor="bob"),
                         seen_entry=journal_tip(Compensation, proposal.pk))
    # USED again, its redemption counting again, under a decision that still says RETURN.
    assert UserCoupon.objects.get(pk=coupon.pk).status == "USED"
    assert coupon.redemptions.get().succeeded

    assert reconcile().found_new == 0

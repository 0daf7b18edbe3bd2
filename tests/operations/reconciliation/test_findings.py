"""Findings are state: a re-run refreshes them, a fixed fault closes itself, and an operator's
repair runs through the services and writes its ledger row."""

from decimal import Decimal

import pytest
from django.core.management import call_command

from coupons.errors import CouponExpired, FindingNotOpen, ValidationFailed
from coupons.models import CouponOperation, FactType, Finding, OutboxEvent, UserCoupon
from coupons.services import coupon_issue, coupon_release
from operations.reconcile import finding_apply, finding_dismiss
from refunds.models import RefundCoupon
from refunds.services.refund_receive import refund_receive
from tests.conftest import lock
from tests.coupons.safety.breakage import redeemed, version_gap
from tests.operations.reconciliation.conftest import fact_without_handler, open_findings, reconcile
from tests.operations.reconciliation.test_checks import GRACE, executed_return_without_its_command

pytestmark = pytest.mark.django_db


def ledger(coupon) -> list[tuple[str, str, str]]:
    return list(CouponOperation.objects.filter(coupon=coupon).order_by("to_version")
                .values_list("op_type", "to_state", "actor"))


def test_rerunning_refreshes_the_finding_instead_of_adding_one(coupon, ctx, clock):
    lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)
    first = reconcile()
    [finding] = open_findings()
    clock.advance(minutes=10)

    second = reconcile()

    assert (first.found_new, second.found_new, second.still_open) == (1, 0, 1)
    assert Finding.objects.count() == 1
    refreshed = Finding.objects.get()
    assert refreshed.first_seen_at == finding.first_seen_at
    assert refreshed.last_seen_at > finding.last_seen_at


def test_a_fault_fixed_elsewhere_closes_itself_on_the_next_run(coupon, ctx):
    _, proof = lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)
    reconcile()
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx, reason="the order service retried")

    run = reconcile()

    assert (run.found_new, run.still_open, run.closed) == (0, 0, 1)
    closed = Finding.objects.get()
    assert closed.status == "CLOSED" and closed.closed_at is not None
    assert closed.resolved_by == ""  # nobody resolved it: it stopped being true


def test_applying_a_release_runs_the_release_under_the_operators_name(coupon, ctx, operator):
    lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)
    reconcile()

    finding = finding_apply(finding_id=open_findings()[0].pk, ctx=operator)

    assert (finding.status, finding.resolution, finding.resolved_by) == (
        "RESOLVED", "APPLIED", "operator-1")
    assert ledger(coupon)[-1] == ("RELEASE", "AVAILABLE", "operator-1")
    assert OutboxEvent.objects.filter(operation__coupon=coupon,
                                      event_type="CouponReleased").exists()
    assert reconcile().found_new == 0


def test_applying_a_compensating_redeem_redeems_for_the_paid_order(coupon, ctx, operator):
    lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.PAYMENT_SUCCEEDED, payment_id="P-A")
    reconcile()

    finding_apply(finding_id=open_findings()[0].pk, ctx=operator)

    assert ledger(coupon)[-1] == ("REDEEM", "USED", "operator-1")
    assert coupon.redemptions.get().payment_id == "P-A"
    assert reconcile().found_new == 0


def test_a_compensating_redeem_of_an_available_coupon_locks_it_again_first(
        coupon, ctx, operator):
    _, proof = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
    fact_without_handler("order-A", FactType.PAYMENT_SUCCEEDED, payment_id="P-A")
    reconcile()

    finding_apply(finding_id=open_findings()[0].pk, ctx=operator)

    assert [op[:2] for op in ledger(coupon)[-2:]] == [("LOCK", "LOCKED"), ("REDEEM", "USED")]
    assert coupon.redemptions.get().order_id == "order-A"


def test_applying_a_return_redrive_returns_the_coupon_for_its_decision(template, ctx, operator):
    coupon = redeemed(template, ctx)
    decision = executed_return_without_its_command(coupon)
    reconcile()

    finding_apply(finding_id=open_findings()[0].pk, ctx=operator)

    assert ledger(coupon)[-1] == ("RETURN", "AVAILABLE", "operator-1")
    decision.refresh_from_db()
    assert decision.operation.op_type == "RETURN" and decision.operation.refund_id == "R1"
    assert reconcile().found_new == 0


def test_applying_an_event_redrive_publishes_it(template, ctx, operator, clock,
                                                redrive_exchange):
    coupon = redeemed(template, ctx)
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    clock.advance(seconds=GRACE.total_seconds() + 1)
    reconcile()

    finding = finding_apply(finding_id=open_findings()[0].pk, ctx=operator)

    assert (finding.status, finding.resolution) == ("RESOLVED", "APPLIED")
    returned = RefundCoupon.objects.get(refund_id="R1").operation
    # The coupon's events go out in their order, the RETURN's last; nothing is left behind.
    events = list(OutboxEvent.objects.filter(coupon=coupon).order_by("id"))
    assert all(event.published_at is not None for event in events)
    assert [m["message_id"] for m in redrive_exchange.drain()] == [str(e.pk) for e in events]
    assert events[-1].operation == returned


def test_a_finding_that_no_longer_holds_closes_instead_of_repairing(coupon, ctx, operator):
    _, proof = lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)
    reconcile()
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)

    finding = finding_apply(finding_id=open_findings()[0].pk, ctx=operator)

    assert finding.status == "CLOSED"
    assert [op[0] for op in ledger(coupon)] == ["ISSUE", "LOCK", "RELEASE"]  # one release


def test_a_refused_repair_leaves_the_finding_open(coupon, ctx, operator, clock):
    _, proof = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
    fact_without_handler("order-A", FactType.PAYMENT_SUCCEEDED, payment_id="P-A")
    reconcile()
    clock.advance(days=31)  # the coupon expired meanwhile: it cannot be locked again

    with pytest.raises(CouponExpired):
        finding_apply(finding_id=open_findings()[0].pk, ctx=operator)

    assert open_findings()[0].status == "OPEN"
    assert UserCoupon.objects.get(pk=coupon.pk).status == "AVAILABLE"


def test_a_p0_finding_has_no_automatic_repair_but_can_be_dismissed(
        template, ctx, operator, broken_on_purpose):
    coupon = version_gap(template, ctx)
    broken_on_purpose.add(coupon.pk)
    reconcile()
    finding = open_findings()[0]

    with pytest.raises(ValidationFailed):
        finding_apply(finding_id=finding.pk, ctx=operator)
    with pytest.raises(ValidationFailed):
        finding_dismiss(finding_id=finding.pk, note="  ", ctx=operator)
    dismissed = finding_dismiss(finding_id=finding.pk, note="known import bug, ticket 42",
                                ctx=operator)

    assert (dismissed.status, dismissed.resolution, dismissed.resolved_by) == (
        "RESOLVED", "DISMISSED", "operator-1")
    with pytest.raises(FindingNotOpen):
        finding_dismiss(finding_id=finding.pk, note="again", ctx=operator)
    # Still true, but a person looked at it: the next run does not open it again.
    assert reconcile().found_new == 0
    assert Finding.objects.count() == 1


def test_the_command_prints_its_summary_and_fails_on_an_open_p0(
        template, ctx, capsys, broken_on_purpose):
    call_command("reconcile")
    assert "checked 0 coupons" in capsys.readouterr().out
    coupon = version_gap(template, ctx)
    broken_on_purpose.add(coupon.pk)

    with pytest.raises(SystemExit) as exit_status:
        call_command("reconcile", batch_size=1)

    assert exit_status.value.code == 2
    out = capsys.readouterr().out
    assert "checked 1 coupons" in out and "1 new, 0 still open, 0 closed" in out
    assert "open: P0 1, P1 0, P2 0" in out


def test_batches_cover_every_coupon(template, ctx):
    coupons = [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
               for _ in range(5)]
    for number, coupon in enumerate(coupons):
        lock(coupon, ctx, order_id=f"order-{number}")
        fact_without_handler(f"order-{number}", FactType.ORDER_CLOSED)

    run = reconcile(batch_size=2)

    assert (run.coupons_checked, run.found_new) == (5, 5)
    assert sorted(f.coupon_id for f in open_findings()) == sorted(c.pk for c in coupons)


def test_a_coupon_that_moved_while_its_batch_was_read_waits_for_the_next_run(coupon, ctx):
    """A command committing between the batch's reads could make them disagree: the batch
    leaves that coupon's findings as they were, neither refreshed nor closed."""
    from operations.reconcile.checks import COUPON_FIELDS
    from operations.reconcile.run import record_batch

    _, proof = lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)
    reconcile()
    read_before = list(UserCoupon.objects.filter(pk=coupon.pk).values(*COUPON_FIELDS))
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)  # commits after the read

    assert record_batch(read_before, detected=[], actor="test") == (0, 0, 0)
    assert open_findings()[0].coupon_id == coupon.pk
    assert reconcile().closed == 1

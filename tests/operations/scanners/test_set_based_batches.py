"""The scanners' set-based batches: the same outcomes as one command per coupon, in a number
of statements that does not grow with the batch."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from coupons.errors import InvalidState
from coupons.models import CouponOperation, JournalEntry, OutboxEvent
from coupons.models import CouponStatus as S
from coupons.models import OperationType as Op
from coupons.services.bulk_release import coupons_release_expired
from coupons.write import transitions
from operations import scanners
from tests.command_checks import ledger
from tests.operations.scanners.test_lease_scanner import (
    LEASE,
    issue,
    lock_all,
    pay,
    statuses,
)

pytestmark = pytest.mark.django_db


def queries_to_release(template, ctx, clock, n) -> int:
    coupons = issue(template, ctx, n, user_id=f"u-{n}")
    lock_all(coupons, ctx)
    clock.advance(seconds=LEASE + 1)
    with CaptureQueriesContext(connection) as queries:
        assert scanners.scan_leases(batch=100).counts == {"released": n}
    assert statuses(coupons) == ["AVAILABLE"] * n
    return len(queries)


def test_a_batch_takes_as_many_statements_for_twenty_leases_as_for_two(template, ctx, clock):
    assert queries_to_release(template, ctx, clock, 2) == queries_to_release(
        template, ctx, clock, 20)


def test_a_mixed_batch_releases_the_unpaid_and_redeems_the_paid(template, ctx, clock, api):
    coupons = issue(template, ctx, 4)
    # The payment overtook the LOCK (nothing to redeem then): the scanner must redeem it.
    assert pay(api, clock, f"order-{coupons[1].pk}", "P-1")["outcome"]["action"] == "NO_COUPON"
    lock_all(coupons, ctx)
    clock.advance(seconds=LEASE + 1)

    report = scanners.scan_leases(batch=100)

    assert report.counts == {"released": 3, "redeemed": 1}
    assert statuses(coupons) == ["AVAILABLE", "USED", "AVAILABLE", "AVAILABLE"]
    for coupon in (coupons[0], coupons[2], coupons[3]):
        assert [op for op, *_ in ledger(coupon)] == ["ISSUE", "LOCK", "RELEASE"]
        release = CouponOperation.objects.get(coupon=coupon, op_type="RELEASE")
        # Journaled with the batch's one INSERT of entries (the autouse check folds it).
        assert JournalEntry.objects.filter(subject="coupons.couponoperation",
                                           subject_id=release.pk, kind="recorded").exists()
        event = OutboxEvent.objects.get(operation=release)
        assert (event.event_type, event.payload["operation_id"], event.payload["to_state"]) == (
            "CouponReleased", release.pk, "AVAILABLE")


def queries_to_expire(template, ctx, clock, n) -> int:
    coupons = issue(template, ctx, n, user_id=f"u-{n}")
    clock.advance(days=31)  # past the 30-day validity of the coupons just issued
    with CaptureQueriesContext(connection) as queries:
        assert scanners.expire_coupons(batch=100).counts == {"expired": n}
    assert statuses(coupons) == ["EXPIRED"] * n
    for coupon in coupons:
        expire = CouponOperation.objects.get(coupon=coupon, op_type="EXPIRE")
        assert OutboxEvent.objects.get(operation=expire).event_type == "CouponExpired"
    return len(queries)


def test_an_expiry_batch_takes_as_many_statements_for_twenty_coupons_as_for_two(
    template, ctx, clock,
):
    assert queries_to_expire(template, ctx, clock, 2) == queries_to_expire(
        template, ctx, clock, 20)


def test_a_batch_move_the_transition_table_forbids_is_refused_before_it_writes(
        template, ctx, clock, monkeypatch):
    """The batch UPDATE is checked against the same TRANSITIONS as a one-coupon command: were
    RELEASE no longer allowed to end in AVAILABLE, the batch writes nothing."""
    coupons = issue(template, ctx, 3, user_id="u-guard")
    lock_all(coupons, ctx)
    clock.advance(seconds=LEASE + 1)
    before = [ledger(coupon) for coupon in coupons]
    monkeypatch.setitem(transitions.TRANSITIONS, Op.RELEASE, {S.LOCKED: {S.EXPIRED}})
    due = list(scanners.leases_due())

    with pytest.raises(InvalidState):
        coupons_release_expired(coupons=due, ctx=scanners.LEASE_SCANNER, now=clock.now(),
                                reason="lease_expired")

    assert statuses(coupons) == ["LOCKED"] * 3
    assert [ledger(coupon) for coupon in coupons] == before


def test_an_expiry_batch_move_the_transition_table_forbids_is_refused_before_it_writes(
        template, ctx, clock, monkeypatch):
    """The expiry scanner's batch is checked against TRANSITIONS too: were EXPIRE no longer a
    move from AVAILABLE, its batch writes nothing."""
    coupons = issue(template, ctx, 3, user_id="u-expiry-guard")
    clock.advance(days=31)  # the template's coupons are valid 30 days
    before = [ledger(coupon) for coupon in coupons]
    monkeypatch.setitem(transitions.TRANSITIONS, Op.EXPIRE, {})

    with pytest.raises(InvalidState):
        scanners.expire_due_coupons(list(scanners.coupons_due_to_expire()))

    assert statuses(coupons) == ["AVAILABLE"] * 3
    assert [ledger(coupon) for coupon in coupons] == before


def test_every_move_the_scanners_batches_write_is_one_the_transition_table_allows(
        template, ctx, clock):
    coupons = issue(template, ctx, 4, user_id="u-moves")
    lock_all(coupons[:2], ctx)
    clock.advance(seconds=LEASE + 1)
    assert scanners.scan_leases(batch=100).counts == {"released": 2}
    clock.advance(days=31)
    assert scanners.expire_coupons(batch=100).counts == {"expired": 4}

    moves = set(CouponOperation.objects.filter(
        coupon__in=coupons, actor__in=[scanners.LEASE_SCANNER.actor,
                                       scanners.EXPIRY_SCANNER.actor],
    ).values_list("op_type", "from_state", "to_state"))

    assert moves == {(Op.RELEASE, S.LOCKED, S.AVAILABLE), (Op.EXPIRE, S.AVAILABLE, S.EXPIRED)}
    assert all(transitions.is_allowed(*move) for move in moves)

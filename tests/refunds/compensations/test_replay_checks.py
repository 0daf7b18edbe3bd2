"""The per-coupon check replays REVERSE and COMPENSATE rows: each check fires on a broken case.

Broken histories are written past the services (straight through the transition function or
an UPDATE) inside a savepoint that is rolled back, so the suite's own ledger check stays green.
"""

from contextlib import contextmanager

import pytest
from django.db import transaction

from coupons import clock as coupon_clock
from coupons.evidence.replay import coupon_check
from coupons.models import CouponStatus, OperationType, Redemption, UserCoupon
from coupons.services import coupon_void
from coupons.write.rows import lock_coupon_row
from coupons.write.transitions import Command, apply_transition
from tests.app_role import past_the_triggers
from tests.refunds.compensations.conftest import approve, last_op, ok, propose

pytestmark = pytest.mark.django_db


@contextmanager
def rolled_back():
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def write(coupon_id, op_type, to_state, ctx, **fields):
    coupon = lock_coupon_row(coupon_id)
    apply_transition(coupon, Command(op_type, ctx, coupon_clock.now(), ledger=fields), to_state,
                     coupon.state_version)


def check(coupon_id):
    return coupon_check(UserCoupon.objects.get(pk=coupon_id))


def test_a_real_reversal_and_money_row_replay_clean(alice, bob, redeemed):
    ok(approve(bob, ok(propose(alice, redeemed, amount="2.00"), 201)["id"]))
    ok(approve(bob, ok(propose(alice, redeemed), 201)["id"]))

    report = check(redeemed.coupon_id)

    assert report.ok, report.violations
    assert (report.replayed_state, report.replayed_version) == ("AVAILABLE", 5)


def test_a_reverse_that_names_no_operation_is_caught(redeemed, ctx):
    with rolled_back():
        write(redeemed.coupon_id, OperationType.REVERSE, CouponStatus.AVAILABLE, ctx)
        report = check(redeemed.coupon_id)

    assert "does not name an earlier operation" in report.violations[7][0]


def test_a_reverse_that_does_not_restore_the_state_before_is_caught(coupon, ctx):
    coupon_void(coupon_id=coupon.pk, expected_version=1, reason="risk", ctx=ctx)
    voided = last_op(coupon, OperationType.VOID)
    with rolled_back():
        # VOID came from AVAILABLE; a "reversal" to USED invents a redemption state.
        write(coupon.pk, OperationType.REVERSE, CouponStatus.USED, ctx,
              original_operation=voided)
        report = check(coupon.pk)

    assert "does not undo VOID AVAILABLE→VOID" in report.violations[7][0]


def test_a_reversed_redeem_whose_redemption_still_counts_is_caught(redeemed, ctx):
    with rolled_back():
        write(redeemed.coupon_id, OperationType.REVERSE, CouponStatus.AVAILABLE, ctx,
              original_operation=redeemed)
        report = check(redeemed.coupon_id)

    assert list(report.violations) == [2]
    assert "succeeded=True" in report.violations[2][0]


def test_a_redemption_switched_off_without_a_ledger_row_is_caught(redeemed):
    with rolled_back():
        with past_the_triggers():  # no service moves it so: the journal would refuse it
            Redemption.objects.update(succeeded=False)
        report = check(redeemed.coupon_id)

    # USED with no counting redemption, and a flag the ledger never wrote.
    assert len(report.violations[2]) == 2


def test_money_on_a_locked_coupon_is_not_a_transition(coupon, ctx):
    from tests.conftest import lock

    lock(coupon, ctx)
    with rolled_back():
        coupon_row = lock_coupon_row(coupon.pk)
        UserCoupon.objects.filter(pk=coupon.pk).update(state_version=3)
        coupon_row.refresh_from_db()
        from coupons.write.records import append_operation, append_outbox

        append_outbox(append_operation(
            coupon=coupon_row, op_type=OperationType.COMPENSATE, from_state="LOCKED",
            from_version=2, ctx=ctx, now=coupon_clock.now(),
        ))
        report = check(coupon.pk)

    assert "COMPENSATE v2→v3: LOCKED→LOCKED does not follow LOCKED" in report.violations[7][0]

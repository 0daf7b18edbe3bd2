"""The signer folds the rows of the entries it is about to sign: a row rolled back or rewritten
past the services after its entry was written, and before a checkpoint covered it, is a
finding (named, exit status 3); the signer signs the journal as the database wrote it all the
same, so detection never becomes an outage."""

import io
import re

import pytest
from django.core.management import call_command
from django.db import connection

from coupons.models import CouponOperation, LedgerCheckpoint, OrderCoupon, Redemption
from coupons.services import coupon_redeem
from operations.checkpoint import ledger_checkpoint
from tests.app_role import past_the_triggers
from tests.conftest import lock
from tests.coupons.checkpoints.conftest import checkpoint_file
from tests.coupons.checkpoints.test_journal_log import sequence

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_issued(coupon, ctx, checkpoint_dir):
    """Checkpoint 1 signs the issued coupon's one entry; then it is locked and redeemed, and
    those entries are sequenced but not signed yet."""
    sequence()
    ledger_checkpoint()
    _, proof = lock(coupon, ctx, order_id="order-A")
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="pay-A", ctx=ctx)
    sequence()
    coupon.refresh_from_db()
    return coupon


def roll_back(coupon) -> list[int]:
    """What the owner does with the triggers off: the lock and the redemption undone (ledger
    rows, redemption, order binding, events deleted, the coupon back to v1 AVAILABLE); their
    journal entries are left as they are."""
    rows = list(CouponOperation.objects.filter(coupon=coupon, to_version__gt=1)
                .values_list("pk", flat=True))
    with past_the_triggers(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM coupons_outboxevent WHERE operation_id = ANY(%s)", [rows])
        Redemption.objects.filter(coupon=coupon).delete()
        OrderCoupon.objects.filter(coupon=coupon).delete()
        cursor.execute("DELETE FROM coupons_couponoperation WHERE id = ANY(%s)", [rows])
        cursor.execute("UPDATE coupons_usercoupon SET state_version = 1, status = 'AVAILABLE', "
                       "current_lock_id = NULL, locked_order_id = NULL, "
                       "lock_token_hash = NULL, lock_expires_at = NULL WHERE id = %s",
                       [coupon.pk])
    return rows


def test_a_rollback_that_leaves_entries_after_the_signed_head_is_signed_and_named(
        signed_issued, checkpoint_dir, broken_on_purpose):
    rows = roll_back(signed_issued)
    broken_on_purpose.add(signed_issued.pk)
    err = io.StringIO()

    with pytest.raises(SystemExit) as exit_:
        call_command("ledger_checkpoint", stdout=io.StringIO(), stderr=err)

    said = err.getvalue()
    assert exit_.value.code == 3
    for pk in rows:
        assert (f"coupons.couponoperation {pk} of coupon {signed_issued.pk}: has journal "
                "entries but no row") in said, said
    assert "coupons.redemption" in said and "coupons.ordercoupon" in said, said
    assert list(LedgerCheckpoint.objects.values_list("number", flat=True)) == [1, 2]
    assert checkpoint_file(checkpoint_dir, 2).exists()


def test_a_row_rewritten_before_it_is_sequenced_is_signed_and_named(
        signed_issued, checkpoint_dir, broken_on_purpose):
    redeem = CouponOperation.objects.get(coupon=signed_issued, to_version=3)
    with past_the_triggers():
        CouponOperation.objects.filter(pk=redeem.pk).update(payment_id="pay-attacker")
    broken_on_purpose.add(signed_issued.pk)

    run = ledger_checkpoint()

    assert any(re.fullmatch(rf"journal entry \d+ \(log position \d+\), coupons.couponoperation "
                            rf"{redeem.pk} of coupon {signed_issued.pk}: payment_id is "
                            r'"pay-attacker", its journal says "pay-A"', finding)
               for finding in run.findings), run.findings
    assert run.checkpoint.number == 2 and LedgerCheckpoint.objects.count() == 2


def test_honest_writes_after_the_signed_head_are_signed(signed_issued, checkpoint_dir):
    run = ledger_checkpoint()

    assert run.checkpoint.number == 2
    assert checkpoint_file(checkpoint_dir, 2).exists()

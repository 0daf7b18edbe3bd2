"""A ledger row rewritten or deleted after a signed journal head, however the attacker makes it
agree with its entry and leaf: the signer names it and signs on, verify_ledger and the
coupon's check name the entry and the coupon (docs/evidence.md)."""

import hashlib
import re

import pytest
from django.db import connection

from coupons.models import CouponOperation, JournalEntry, JournalLeaf
from operations.checkpoint import ledger_checkpoint
from tests.app_role import past_the_triggers
from tests.coupons.checkpoints.conftest import checkpoint_file, rewrite, verify
from tests.coupons.checkpoints.test_journal_log import sequence

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed(redeemed, checkpoint_dir):
    """The redeemed coupon's five entries sequenced and signed."""
    sequence()
    ledger_checkpoint()
    return redeemed


def lock_row(coupon) -> CouponOperation:
    return CouponOperation.objects.get(coupon=coupon, to_version=2)


def releaf(row) -> None:
    """The leaf of the row's entry made to match its rewritten content (triggers off)."""
    entry = JournalEntry.objects.get(subject="coupons.couponoperation", subject_id=row.pk)
    with past_the_triggers():
        JournalLeaf.objects.filter(entry=entry).update(
            leaf_hash=hashlib.sha256(b"\0" + entry.content.encode()).hexdigest())


def test_a_ledger_row_rewritten_with_its_entry_and_leaf_after_a_signed_head_is_named(
        signed, checkpoint_dir, public_key):
    """The row, its entry (whose hash anyone computes) and its leaf agree, so the per-coupon
    check passes, but the log no longer makes the root signed: the signer names it and signs
    on, verify_ledger names that one position, its entry and the coupon."""
    rewrite(signed, 2, actor="attacker")
    row = lock_row(signed)
    releaf(row)

    findings = ledger_checkpoint().findings
    assert any(f"coupons.couponoperation {row.pk} of coupon {signed.pk}): its entry is not the "
               "one the signer signed there" in finding for finding in findings), findings
    status, out = verify(checkpoint_file(checkpoint_dir), "--public-key", public_key)
    assert status == 1
    assert re.search(rf"BROKEN coupon {signed.pk}: journal log position \d \(entry \d+, "
                     rf"coupons.couponoperation {row.pk}\): its entry is not the one "
                     rf"checkpoint 1 signed there", out), out
    assert out.count("journal log position") == 1, out


def test_a_ledger_row_rewritten_with_its_entry_under_its_position_is_named_by_the_signer(
        signed):
    """The leaf left as sequenced: the signer recomputes it from the entry and names it."""
    rewrite(signed, 3, actor="attacker")

    findings = ledger_checkpoint().findings
    assert any(re.fullmatch(rf"journal log position \d \(entry \d+, coupons.couponoperation "
                            rf"\d+ of coupon {signed.pk}\): its entry is not the one the signer "
                            r"signed there \(rewritten or removed after it was signed\)",
                            finding) for finding in findings), findings


def test_a_ledger_row_rewritten_alone_is_named_by_its_journal(
        signed, checkpoint_dir, public_key, broken_on_purpose):
    """The row is not its entry's fold: the full check (invariant 9) and verify_ledger name
    it."""
    from coupons.evidence.replay import coupon_check

    row = lock_row(signed)
    with past_the_triggers():
        CouponOperation.objects.filter(pk=row.pk).update(order_id="o-attacker")
    broken_on_purpose.add(signed.pk)

    assert any("o-attacker" in problem
               for problem in coupon_check(signed, full=True).violations[9])
    status, out = verify(checkpoint_file(checkpoint_dir), "--public-key", public_key)
    assert status == 1
    assert f"BROKEN coupon {signed.pk}: coupons.couponoperation {row.pk}: " in out


def test_a_rollback_after_a_signed_head_is_named_by_the_journal(
        signed, checkpoint_dir, public_key, broken_on_purpose):
    """The rows deleted leave their entries behind (named by verify_ledger; the signer, which
    folds only the rows of entries it has not signed yet, does not see them); deleting the
    entries too cuts the signed log (the signer names each position and signs on)."""
    rows = list(CouponOperation.objects.filter(coupon=signed, to_version__gt=1)
                .values_list("pk", flat=True))
    with past_the_triggers(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM coupons_outboxevent WHERE operation_id = ANY(%s)", [rows])
        cursor.execute("DELETE FROM coupons_couponoperation WHERE id = ANY(%s)", [rows])
        cursor.execute("UPDATE coupons_usercoupon SET state_version = 1, status = 'AVAILABLE', "
                       "current_lock_id = NULL, locked_order_id = NULL, "
                       "lock_token_hash = NULL, lock_expires_at = NULL WHERE id = %s",
                       [signed.pk])
    broken_on_purpose.add(signed.pk)

    status, out = verify(checkpoint_file(checkpoint_dir), "--public-key", public_key)
    assert status == 1
    for pk in rows:
        assert f"coupons.couponoperation {pk}: has journal entries but no row" in out

    entries = list(JournalEntry.objects.filter(subject="coupons.couponoperation",
                                               subject_id__in=rows).values_list("pk", flat=True))
    with past_the_triggers():
        JournalLeaf.objects.filter(entry_id__in=entries).delete()
        JournalEntry.objects.filter(pk__in=entries).delete()
    run = ledger_checkpoint()
    assert run.checkpoint.number == 2
    assert sum("its entry is not the one the signer signed there" in finding
               for finding in run.findings) >= len(entries), run.findings

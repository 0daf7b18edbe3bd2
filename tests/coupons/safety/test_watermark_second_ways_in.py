"""The watermark's two other guards seen firing (scripts/hand_mutations.toml): the newest
checkpoint counts only once its signature holds, and a row at exactly the signed size is not
covered by it (coupons/evidence/check_watermark.py, signed_coverage.py)."""

import json

import pytest

from coupons import clock as coupons_clock
from coupons.evidence.checkpoint_keys import key_id, signing_key
from coupons.models import CheckWatermark, JournalEntry, LedgerCheckpoint
from operations.checkpoint import ledger_checkpoint
from tests.coupons.safety.test_check_watermark import (  # noqa: F401 (fixtures)
    check,
    edit_row,
    heads,
    journal_problems,
    later_rows,
    names_the_edit,
    verified,
)
from tests.signed_head import sequence

pytestmark = pytest.mark.django_db


def test_a_forged_newest_checkpoint_does_not_move_the_watermark_over_unsigned_rows(
        verified, clock, api, broken_on_purpose):  # noqa: F811
    """Rows v42–v46 sequenced but signed by no head; a checkpoint row any login inserts on
    top of the signed ones claims a billion entries: the watermark stays at v41, so v44
    rewritten is named by the next check."""
    later_rows(verified, clock, 3)
    sequence()
    body = {"number": 99, "time": "2026-06-01T12:00:00+00:00", "journal_size": 10**9,
            "journal_root": "0" * 64}
    LedgerCheckpoint.objects.create(
        number=99, signed_at=coupons_clock.now(), key_id=key_id(signing_key().public_key()),
        body=json.dumps(body), signature="AAAA")
    assert check(api, verified)["ok"] is True
    assert CheckWatermark.objects.get(coupon=verified).through_version == 41

    row = edit_row(verified, 44)
    broken_on_purpose.add(verified.pk)

    assert names_the_edit(row) in journal_problems(api, verified)


def test_a_row_at_exactly_the_signed_size_is_not_covered(
        verified, clock, api, tmp_path, settings, broken_on_purpose):  # noqa: F811
    """v42 written, then a head signed before it was sequenced: its entry takes the position
    equal to the signed size, which that head does not cover."""
    sequence()
    later_rows(verified, clock, 1)
    settings.LEDGER_CHECKPOINT_DIR = str(tmp_path / "checkpoints")
    signed = json.loads(ledger_checkpoint().checkpoint.body)["journal_size"]
    sequence()
    [entry] = JournalEntry.objects.filter(subject="coupons.couponoperation",
                                          subject_id=verified.operations.get(to_version=42).pk)
    assert entry.leaf.index == signed
    assert check(api, verified)["ok"] is True
    assert CheckWatermark.objects.get(coupon=verified).through_version == 41

    row = edit_row(verified, 42)
    broken_on_purpose.add(verified.pk)

    assert names_the_edit(row) in journal_problems(api, verified)

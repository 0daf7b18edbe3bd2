"""Each guard of the signed checkpoints seen firing on its own broken case, one test per guard
that had none (scripts/hand_mutations.toml breaks each and names the test here that fails)."""

import json

import pytest

from coupons.models import CouponOperation, JournalEntry, LedgerCheckpoint
from coupons.services import coupon_void
from operations.checkpoint import CheckpointRefused, ledger_checkpoint
from tests.app_role import past_the_triggers
from tests.coupons.checkpoints.conftest import checkpoint_file, rewrite, verify
from tests.coupons.checkpoints.test_journal_log import sequence
from tests.coupons.checkpoints.test_signer_trusts_its_files import copy_row

pytestmark = pytest.mark.django_db


def leaf_position(row) -> int:
    entry = JournalEntry.objects.get(subject=row._meta.label_lower, subject_id=row.pk)
    return entry.leaf.index


def test_the_signer_folds_the_row_of_the_first_position_after_its_head(
        redeemed, checkpoint_dir, ctx, broken_on_purpose):
    """A row written before a head that does not cover it gets the first position after that
    head (the head's own entry is younger); rewritten past the triggers, it is named."""
    sequence()
    coupon_void(coupon_id=redeemed.pk, expected_version=3, reason="late", ctx=ctx)
    first = json.loads(ledger_checkpoint().checkpoint.body)
    sequence()
    void = CouponOperation.objects.get(coupon=redeemed, to_version=4)
    assert leaf_position(void) == first["journal_size"]
    with past_the_triggers():
        CouponOperation.objects.filter(pk=void.pk).update(actor="attacker")
    broken_on_purpose.add(redeemed.pk)

    findings = ledger_checkpoint().findings

    assert any(f"coupons.couponoperation {void.pk} of coupon {redeemed.pk}: actor is "
               '"attacker"' in finding for finding in findings), findings


def test_the_signer_refuses_a_chain_of_its_own_with_a_link_missing(redeemed, checkpoint_dir):
    for _ in range(3):
        ledger_checkpoint()
    for name in ("checkpoint-00000002.json", "leaves-00000002.bin"):
        (checkpoint_dir / name).rename(checkpoint_dir.parent / name)

    with pytest.raises(CheckpointRefused, match="refusing to sign: checkpoint-00000003.json does "
                                                "not follow checkpoint 1"):
        ledger_checkpoint()


def test_the_signer_refuses_leaves_that_do_not_make_its_signed_root(redeemed, checkpoint_dir):
    sequence()
    ledger_checkpoint()
    leaves = checkpoint_dir / "leaves-00000001.bin"
    data = bytearray(leaves.read_bytes())
    data[0] ^= 1
    leaves.chmod(0o644)
    leaves.write_bytes(bytes(data))

    with pytest.raises(CheckpointRefused, match="the leaves files do not make the journal root "
                                                "checkpoint 1 signed"):
        ledger_checkpoint()


def test_verify_ledger_believes_no_leaves_file_that_does_not_make_the_signed_root(
        redeemed, checkpoint_dir, public_key):
    """A leaves file changed beside honest checkpoints names no innocent position."""
    sequence()
    ledger_checkpoint()
    leaves = checkpoint_dir / "leaves-00000001.bin"
    data = bytearray(leaves.read_bytes())
    data[32] ^= 1
    leaves.chmod(0o644)
    leaves.write_bytes(bytes(data))

    status, out = verify(checkpoint_dir, "--public-key", public_key)

    assert status == 1
    assert out == ("BROKEN: the leaves files do not make the journal root checkpoint 1 signed: "
                   "positions are named by range\n")


def test_verify_ledger_compares_the_databases_newest_checkpoint_with_the_signed_file(
        redeemed, checkpoint_dir, public_key):
    sequence()
    ledger_checkpoint()
    row = LedgerCheckpoint.objects.get(number=1)
    with past_the_triggers():
        LedgerCheckpoint.objects.filter(pk=row.pk).update(body=row.body.replace(
            '"journal_size":5', '"journal_size":4'))

    status, out = verify(checkpoint_file(checkpoint_dir), "--public-key", public_key)

    assert status == 1
    assert "BROKEN: the database's checkpoint 1 is not the signed one" in out


def test_a_genuine_checkpoint_copied_under_a_higher_number_is_not_the_newest(
        redeemed, checkpoint_dir, reader):
    sequence()
    ledger_checkpoint()
    ledger_checkpoint()
    copy_row(1, as_number=9)

    proof = reader.get(f"/api/v1/coupons/{redeemed.pk}/proof").json()

    assert json.loads(proof["checkpoint"]["signed"])["number"] == 2
    assert proof["journal_head"]["checkpoint"] == 2


def test_since_a_checkpoint_nobody_signed_is_not_found(redeemed, checkpoint_dir, reader):
    """The app login holds number 2 with a row of its own; the signer's 2 lives in its files,
    its 3 in the database: `?since=2` finds no verified checkpoint 2."""
    sequence()
    ledger_checkpoint()
    LedgerCheckpoint.objects.create(
        number=2, signed_at=redeemed.issued_at, key_id="k", signature="AAAA",
        body=json.dumps({"number": 2, "journal_size": 1, "journal_root": "0" * 64}))
    ledger_checkpoint()
    ledger_checkpoint()

    response = reader.get(f"/api/v1/coupons/{redeemed.pk}/proof?since=2")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_a_rewrite_at_the_watermarks_own_row_sends_the_check_to_the_whole_ledger(
        redeemed, checkpoint_dir, api, broken_on_purpose):
    """The watermark names its row by its journal entry's hash: that row and its entry
    rewritten to agree (to VOIDED) no longer match it, the check replays every row and names
    the coupon that is not in the state its ledger now says."""
    sequence()
    ledger_checkpoint()
    assert api.get(f"/api/v1/coupons/{redeemed.pk}/check").json()["ok"] is True
    rewrite(redeemed, 3, to_state="VOIDED")
    broken_on_purpose.add(redeemed.pk)

    body = api.get(f"/api/v1/coupons/{redeemed.pk}/check").json()

    assert body["ok"] is False, body

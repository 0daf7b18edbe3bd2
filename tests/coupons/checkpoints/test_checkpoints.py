"""Signed checkpoints: what `ledger_checkpoint` writes, what `verify_ledger` catches, and what no
checkpoint can catch (a rewrite before the first one that covers the coupon)."""

import json
import re

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.core.management.base import CommandError

from coupons.evidence.checkpoint_keys import public_key_text
from coupons.evidence.replay import coupon_check
from coupons.models import CouponOperation, LedgerCheckpoint, OutboxEvent
from coupons.services import coupon_void
from operations.checkpoint import CheckpointRefused, ledger_checkpoint
from tests.coupons.checkpoints.conftest import checkpoint_file, rewrite, save_json, verify
from tests.coupons.checkpoints.test_journal_log import sequence

pytestmark = pytest.mark.django_db


def test_a_checkpoint_is_stored_sent_and_filed_and_verifies(redeemed, checkpoint_dir,
                                                            public_key):
    sequence()
    run = ledger_checkpoint()

    checkpoint = LedgerCheckpoint.objects.get()
    body = json.loads(checkpoint.body)
    assert (checkpoint.number, body["journal_size"], body["previous_number"]) == (1, 5, None)
    event = OutboxEvent.objects.get(event_type="LedgerCheckpointed")
    assert event.coupon_id is None and event.payload["signed"] == checkpoint.body
    assert run.files_written == [checkpoint_file(checkpoint_dir)]
    assert json.loads(checkpoint_file(checkpoint_dir).read_text()) == {
        "signed": checkpoint.body, "signature": checkpoint.signature}
    assert verify(checkpoint_file(checkpoint_dir), "--public-key", public_key) == (
        0, "checkpoint 1 holds: 1 signed checkpoints and 5 journal log positions checked\n")


def test_the_next_checkpoint_names_the_previous_and_its_journal_head(
        redeemed, checkpoint_dir, public_key):
    sequence()
    ledger_checkpoint()
    sequence()
    second = ledger_checkpoint().checkpoint

    first = json.loads(LedgerCheckpoint.objects.get(number=1).body)
    body = json.loads(second.body)
    assert (body["previous_number"], body["previous_journal_size"],
            body["previous_journal_root"]) == (1, 5, first["journal_root"])
    assert body["journal_size"] == 6  # the first checkpoint's own entry
    assert verify(checkpoint_file(checkpoint_dir, 2), "--public-key", public_key)[0] == 0


def test_a_removed_file_stops_the_signer_until_it_is_put_back_from_its_row(
        redeemed, checkpoint_dir):
    """Signing its number again would fork the chain under the real key: it refuses, and the
    row's signed text and signature are the file to put back."""
    ledger_checkpoint()
    ledger_checkpoint()
    removed = checkpoint_file(checkpoint_dir, 2)
    removed.rename(checkpoint_dir / "elsewhere.json")

    with pytest.raises(CheckpointRefused, match="the database holds checkpoint 2, signed by "
                                                "this key, which checkpoint-00000002.json no "
                                                "longer holds"):
        ledger_checkpoint()
    row = LedgerCheckpoint.objects.get(number=2)
    removed.write_text(json.dumps({"signed": row.body, "signature": row.signature}))

    assert ledger_checkpoint().checkpoint.number == 3


@pytest.mark.parametrize("content", ["kept as it is", '{"signed": "{}", "signature": "AA=="}'])
def test_a_changed_file_of_its_own_makes_the_signer_refuse_and_sign_nothing(
        redeemed, checkpoint_dir, content):
    ledger_checkpoint()
    first = checkpoint_file(checkpoint_dir)
    first.chmod(0o644)
    first.write_text(content)

    with pytest.raises(CheckpointRefused, match="checkpoint-00000001.json does not verify"):
        ledger_checkpoint()

    assert LedgerCheckpoint.objects.count() == 1
    assert first.read_text() == content and not checkpoint_file(checkpoint_dir, 2).exists()


def test_a_new_chain_is_the_documented_way_out_of_a_changed_file(redeemed, checkpoint_dir,
                                                                  capsys):
    """docs/operating.md: after a repair, `ledger_checkpoint --new-chain` sets the files aside
    and signs the first checkpoint of a new chain, numbered after every one before."""
    ledger_checkpoint()
    first = checkpoint_file(checkpoint_dir)
    first.chmod(0o644)
    first.write_text("kept as it is")

    call_command("ledger_checkpoint", "--new-chain")

    body = json.loads(json.loads(checkpoint_file(checkpoint_dir, 2).read_text())["signed"])
    assert (body["number"], body["previous_number"], body["previous_journal_size"]) == (
        2, None, None)
    [aside] = checkpoint_dir.glob("superseded-*")
    assert (aside / "checkpoint-00000001.json").read_text() == "kept as it is"
    assert "checkpoint 2: journal of" in capsys.readouterr().out
    call_command("ledger_checkpoint")  # and it goes on from there
    assert checkpoint_file(checkpoint_dir, 3).exists()


def test_without_the_signing_key_the_command_refuses_and_writes_nothing(
        redeemed, checkpoint_dir, settings):
    settings.LEDGER_SIGNING_KEY = ""

    with pytest.raises(CommandError, match="LEDGER_SIGNING_KEY is not set"):
        call_command("ledger_checkpoint")
    with pytest.raises(CommandError, match="LEDGER_SIGNING_KEY is not set"):
        call_command("ledger_public_key")
    with pytest.raises(CommandError, match="give --public-key"):
        call_command("verify_ledger", "--checkpoint", __file__)
    settings.LEDGER_SIGNING_KEY = "bm90IGEga2V5"
    with pytest.raises(CommandError, match="LEDGER_SIGNING_KEY: not an Ed25519 key"):
        call_command("ledger_checkpoint")
    assert not LedgerCheckpoint.objects.exists()


def test_the_public_key_command_prints_the_key_verify_takes(capsys, public_key):
    call_command("ledger_public_key")

    assert capsys.readouterr().out.strip() == public_key


def test_a_tampered_signature_fails(redeemed, checkpoint_dir, public_key, tmp_path):
    ledger_checkpoint()
    document = json.loads(checkpoint_file(checkpoint_dir).read_text())
    signature = bytearray(document["signature"].encode())
    signature[5] = ord("A") if signature[5] != ord("A") else ord("B")

    status, out = verify(save_json(tmp_path / "bad.json",
                                   {**document, "signature": signature.decode()}),
                         "--public-key", public_key)

    assert status == 1 and "signature does not verify" in out


def test_a_changed_checkpoint_file_fails(redeemed, checkpoint_dir, public_key, tmp_path):
    ledger_checkpoint()
    document = json.loads(checkpoint_file(checkpoint_dir).read_text())
    body = json.loads(document["signed"])
    forged = json.dumps({**body, "journal_root": "0" * 64}, sort_keys=True,
                        separators=(",", ":"))

    status, out = verify(save_json(tmp_path / "changed.json", {**document, "signed": forged}),
                         "--public-key", public_key)

    assert status == 1 and "signature does not verify" in out


def test_another_key_does_not_verify_a_checkpoint(redeemed, checkpoint_dir):
    ledger_checkpoint()
    other = public_key_text(Ed25519PrivateKey.from_private_bytes(b"\x01" * 32).public_key())

    status, out = verify(checkpoint_file(checkpoint_dir), "--public-key", other)

    assert status == 1 and "signature does not verify" in out


def test_a_rewrite_after_the_checkpoint_is_named_though_the_row_folds(
        redeemed, checkpoint_dir, public_key):
    """The attacker holds the database and rewrites a ledger row and its journal entry to
    agree: the coupon's check passes, the signed journal head does not."""
    sequence()
    ledger_checkpoint()
    rewrite(redeemed, 2, actor="attacker")

    assert coupon_check(redeemed, full=True).ok  # the row is its entry's fold
    status, out = verify(checkpoint_file(checkpoint_dir), "--public-key", public_key)
    assert status == 1
    assert f"BROKEN coupon {redeemed.pk}: journal log position " in out
    assert out.strip().endswith(f"broken coupons: {redeemed.pk}")


def test_the_signer_signs_on_over_a_rewrite_after_its_checkpoint_and_names_it(
        redeemed, checkpoint_dir, public_key, ctx, capsys):
    """Rewritten with its entry after the checkpoint, then moved one step: the signer signs
    its own signed log extended by the new positions (no fork) and names the position, the
    entry and the coupon; exit status 3."""
    sequence()
    ledger_checkpoint()
    rewrite(redeemed, 3, actor="attacker")
    coupon_void(coupon_id=redeemed.pk, expected_version=3, reason="one step on", ctx=ctx)
    sequence()
    redeem = CouponOperation.objects.get(coupon=redeemed, to_version=3)

    with pytest.raises(SystemExit) as exit_:
        call_command("ledger_checkpoint")

    assert exit_.value.code == 3
    err = capsys.readouterr().err
    assert re.search(rf"FINDING: journal log position \d \(entry \d+, coupons.couponoperation "
                     rf"{redeem.pk} of coupon {redeemed.pk}\): its entry is not the one the "
                     "signer signed there", err), err
    assert verify(checkpoint_dir, "--public-key", public_key)[0] == 1
    second = json.loads(LedgerCheckpoint.objects.get(number=2).body)
    assert (second["previous_number"], second["previous_journal_size"]) == (1, 5)


def test_a_rewrite_before_any_checkpoint_is_undetectable(redeemed, checkpoint_dir, public_key):
    """Documents the limit: a checkpoint signs the journal it finds. Whoever rewrites a row and
    its entry to agree before the first checkpoint whose journal head covers the entry leaves
    a row that folds and an entry the head then signs: nothing older than the checkpoint
    exists to compare with. Run checkpoints often (docs/operating.md: every 10 minutes) so
    that this window stays short, and keep the files and events elsewhere."""
    rewrite(redeemed, 2, actor="attacker")
    sequence()
    ledger_checkpoint()

    assert coupon_check(redeemed, full=True).ok
    assert verify(checkpoint_file(checkpoint_dir), "--public-key", public_key)[0] == 0

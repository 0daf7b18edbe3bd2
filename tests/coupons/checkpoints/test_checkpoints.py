"""Signed checkpoints: what `ledger_checkpoint` writes, what `verify_ledger` catches, and what no
checkpoint can catch (a rewrite before the first one that covers the coupon)."""

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.core.management.base import CommandError

from coupons.evidence.checkpoint_keys import public_key_text
from coupons.evidence.replay import coupon_check
from coupons.models import LedgerCheckpoint, LedgerCheckpointChunk, OutboxEvent, UserCoupon
from operations.checkpoint import ledger_checkpoint
from tests.app_role import past_the_triggers
from tests.coupons.checkpoints.conftest import (
    checkpoint_file,
    rewrite_and_rechain,
    save_json,
    verify,
)

pytestmark = pytest.mark.django_db


def test_a_checkpoint_is_stored_sent_and_filed_and_verifies(redeemed, checkpoint_dir,
                                                            public_key):
    run = ledger_checkpoint()

    checkpoint = LedgerCheckpoint.objects.get()
    body = json.loads(checkpoint.body)
    assert (checkpoint.number, checkpoint.tree_size) == (1, 1)
    assert body["previous_root"] is None and body["root"] == checkpoint.root
    event = OutboxEvent.objects.get(event_type="LedgerCheckpointed")
    assert event.coupon_id is None and event.payload["signed"] == checkpoint.body
    assert run.files_written == [checkpoint_file(checkpoint_dir)]
    assert json.loads(checkpoint_file(checkpoint_dir).read_text()) == {
        "signed": checkpoint.body, "signature": checkpoint.signature}
    assert verify(checkpoint_file(checkpoint_dir), "--public-key", public_key) == (
        0, "checkpoint 1 holds: 1 coupons checked\n")


def test_the_next_checkpoint_names_the_previous_and_shares_its_unchanged_chunks(
        redeemed, checkpoint_dir, public_key):
    ledger_checkpoint()
    second = ledger_checkpoint().checkpoint

    first = LedgerCheckpoint.objects.get(number=1)
    body = json.loads(second.body)
    assert (body["previous_number"], body["previous_root"]) == (1, first.root)
    assert LedgerCheckpointChunk.objects.count() == 1  # nothing changed: one chunk for both
    assert verify(checkpoint_file(checkpoint_dir, 2), "--public-key", public_key)[0] == 0


def test_a_file_never_overwritten_and_a_missing_one_written_by_the_next_run(
        redeemed, checkpoint_dir):
    ledger_checkpoint()
    first = checkpoint_file(checkpoint_dir)
    first.chmod(0o644)
    first.write_text("kept as it is")
    checkpoint_file(checkpoint_dir, 1).rename(checkpoint_dir / "elsewhere.json")
    checkpoint_dir.joinpath("checkpoint-00000002.json").write_text("squatter")

    run = ledger_checkpoint()

    assert run.files_written == [checkpoint_file(checkpoint_dir, 1)]  # 1 again, 2 left alone
    assert checkpoint_file(checkpoint_dir, 2).read_text() == "squatter"


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
    forged = json.dumps({**body, "root": "0" * 64}, sort_keys=True, separators=(",", ":"))

    status, out = verify(save_json(tmp_path / "changed.json", {**document, "signed": forged}),
                         "--public-key", public_key)

    assert status == 1 and "signature does not verify" in out


def test_another_key_does_not_verify_a_checkpoint(redeemed, checkpoint_dir):
    ledger_checkpoint()
    other = public_key_text(Ed25519PrivateKey.from_private_bytes(b"\x01" * 32).public_key())

    status, out = verify(checkpoint_file(checkpoint_dir), "--public-key", other)

    assert status == 1 and "signature does not verify" in out


def test_a_rewrite_after_the_checkpoint_is_named_even_when_it_is_rechained(
        redeemed, coupon, template, ctx, checkpoint_dir, public_key):
    """The attacker holds the database and the chain key (here: the chain function itself) and
    re-chains every row after the edit: the chain check passes, the checkpoint does not."""
    from coupons.services import coupon_issue

    bystander = coupon_issue(template_id=template.pk, user_id="u2", ctx=ctx).coupon
    ledger_checkpoint()
    rewrite_and_rechain(redeemed, 2, actor="attacker")

    assert coupon_check(redeemed).ok  # the chain alone cannot see it
    status, out = verify(checkpoint_file(checkpoint_dir), "--public-key", public_key)
    assert status == 1
    assert f"BROKEN coupon {redeemed.pk}: its ledger row v3 is not the one checkpoint 1 signed" \
        in out
    assert out.strip().endswith(f"broken coupons: {redeemed.pk}")
    assert f"coupon {bystander.pk}" not in out


def test_a_rewrite_after_the_checkpoint_is_seen_by_the_next_checkpoint_too(
        redeemed, checkpoint_dir, public_key):
    ledger_checkpoint()
    rewrite_and_rechain(redeemed, 3, actor="attacker")
    ledger_checkpoint()  # signs the rewritten head: verifying it against checkpoint 1 fails

    status, out = verify(checkpoint_file(checkpoint_dir, 2), "--public-key", public_key)

    assert status == 1
    assert f"coupon {redeemed.pk}: checkpoint 2 has v3, after v3 in checkpoint 1" in out


def test_a_coupon_put_back_to_an_older_version_after_a_checkpoint_is_named_by_the_next(
        redeemed, checkpoint_dir, public_key, broken_on_purpose):
    """Rows untouched and the chain whole, but the coupon row moved back to v2 behind the
    triggers: the next checkpoint signs the v2 head, and verifying it against the previous
    checkpoint (which signed v3) names the step back."""
    ledger_checkpoint()
    with past_the_triggers():
        UserCoupon.objects.filter(pk=redeemed.pk).update(state_version=2)
    broken_on_purpose.add(redeemed.pk)
    ledger_checkpoint()

    status, out = verify(checkpoint_file(checkpoint_dir, 2), "--public-key", public_key)

    assert status == 1
    assert (f"coupon {redeemed.pk}: checkpoint 2 has v2, after v3 in checkpoint 1: its "
            f"history went back or was rewritten") in out


def test_a_rewrite_before_any_checkpoint_is_undetectable(redeemed, checkpoint_dir, public_key):
    """Documents the limit: a checkpoint signs the heads it finds. Whoever rewrites and
    re-chains a history before the first checkpoint that covers it (with the chain key, or on
    the unkeyed chain) leaves a consistent chain whose head the checkpoint then signs: nothing
    older than the checkpoint exists to compare with. Run checkpoints often (docs/operating.md:
    every 10 minutes) so that this window stays short, and keep the files and events elsewhere."""
    rewrite_and_rechain(redeemed, 2, actor="attacker")
    ledger_checkpoint()

    assert coupon_check(redeemed).ok
    assert verify(checkpoint_file(checkpoint_dir), "--public-key", public_key)[0] == 0


def test_stored_leaves_altered_behind_the_triggers_fail_against_the_signed_root(
        redeemed, checkpoint_dir, public_key):
    ledger_checkpoint()
    chunk = LedgerCheckpointChunk.objects.get()
    with past_the_triggers():
        LedgerCheckpointChunk.objects.filter(pk=chunk.pk).update(
            entries=[[redeemed.pk, 3, "f" * 64]])

    status, out = verify(checkpoint_file(checkpoint_dir), "--public-key", public_key)

    assert status == 1 and "stored leaves of chunk 0" in out


"""Signed checkpoints: what `ledger_checkpoint` writes, what `verify_ledger` catches, and what no
checkpoint can catch (a rewrite before the first one that covers the coupon)."""

import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from coupons.evidence.checkpoint_keys import public_key_text
from coupons.evidence.replay import coupon_check
from coupons.models import LedgerCheckpoint, LedgerCheckpointChunk, OutboxEvent, UserCoupon
from coupons.services import coupon_void
from operations.checkpoint import CheckpointRefused, ledger_checkpoint
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
        0, "checkpoint 1 holds: 1 coupons, 1 signed checkpoints and 0 journal log positions "
           "checked\n")


def test_the_next_checkpoint_names_the_previous_and_shares_its_unchanged_chunks(
        redeemed, checkpoint_dir, public_key):
    ledger_checkpoint()
    second = ledger_checkpoint().checkpoint

    first = LedgerCheckpoint.objects.get(number=1)
    body = json.loads(second.body)
    assert (body["previous_number"], body["previous_root"]) == (1, first.root)
    assert LedgerCheckpointChunk.objects.count() == 1  # nothing changed: one chunk for both
    assert verify(checkpoint_file(checkpoint_dir, 2), "--public-key", public_key)[0] == 0


def test_a_missing_file_is_written_by_the_next_run_from_the_row_it_signed(
        redeemed, checkpoint_dir):
    ledger_checkpoint()
    checkpoint_file(checkpoint_dir, 1).rename(checkpoint_dir / "elsewhere.json")

    run = ledger_checkpoint()

    assert run.checkpoint.number == 2
    assert run.files_written == [checkpoint_file(checkpoint_dir, 1),
                                 checkpoint_file(checkpoint_dir, 2)]
    assert (checkpoint_file(checkpoint_dir, 1).read_text()
            == (checkpoint_dir / "elsewhere.json").read_text())


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


def test_the_signer_refuses_a_rewrite_after_its_checkpoint_even_once_the_coupon_moved_on(
        redeemed, checkpoint_dir, public_key, ctx):
    """Rewritten and re-chained with the project's own chain function (the owner's login and
    the chain key), then moved one step: the next checkpoint would sign a head whose history
    is not the one signed. The signer compares with its own last checkpoint and refuses."""
    ledger_checkpoint()
    rewrite_and_rechain(redeemed, 3, actor="attacker")
    coupon_void(coupon_id=redeemed.pk, expected_version=3, reason="one step on", ctx=ctx)

    with pytest.raises(CheckpointRefused, match=(
            rf"not an extension of checkpoint 1.*coupon {redeemed.pk}: v3 is not the row "
            r"signed \(rewritten, then moved on\)")):
        ledger_checkpoint()

    assert LedgerCheckpoint.objects.count() == 1
    assert not checkpoint_file(checkpoint_dir, 2).exists()
    status, out = verify(checkpoint_file(checkpoint_dir, 1), "--public-key", public_key)
    assert status == 1 and f"coupon {redeemed.pk}" in out


def test_the_signer_refuses_a_rollback_after_its_checkpoint(
        redeemed, checkpoint_dir, broken_on_purpose):
    """A redemption rolled back behind the triggers: its ledger rows and their events deleted,
    the coupon row back to AVAILABLE v1. The next checkpoint is refused: a coupon it signed
    at v3 is at v1 now."""
    ledger_checkpoint()
    with past_the_triggers(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM coupons_outboxevent WHERE operation_id IN (SELECT id FROM "
                       "coupons_couponoperation WHERE coupon_id = %s AND to_version > 1)",
                       [redeemed.pk])
        cursor.execute("DELETE FROM coupons_couponoperation WHERE coupon_id = %s "
                       "AND to_version > 1", [redeemed.pk])
        cursor.execute("UPDATE coupons_usercoupon SET state_version = 1, status = 'AVAILABLE', "
                       "current_lock_id = NULL, locked_order_id = NULL, "
                       "lock_token_hash = NULL, lock_expires_at = NULL WHERE id = %s",
                       [redeemed.pk])
    broken_on_purpose.add(redeemed.pk)

    with pytest.raises(CheckpointRefused,
                       match=f"coupon {redeemed.pk} went back from v3 to v1"):
        ledger_checkpoint()

    assert LedgerCheckpoint.objects.count() == 1


def test_a_coupon_put_back_to_an_older_version_after_a_checkpoint_is_named_by_the_next(
        redeemed, checkpoint_dir, public_key, broken_on_purpose, monkeypatch):
    """The auditor does not rely on the signer's refusal: a second checkpoint signed over a
    coupon row moved back to v2 behind the triggers (by a signer that skipped its own check,
    an older one or one that lost its record) is named by verify_ledger against the first."""
    ledger_checkpoint()
    with past_the_triggers():
        UserCoupon.objects.filter(pk=redeemed.pk).update(state_version=2)
    broken_on_purpose.add(redeemed.pk)
    monkeypatch.setattr("operations.checkpoint._Extension.problems", lambda self: [])
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


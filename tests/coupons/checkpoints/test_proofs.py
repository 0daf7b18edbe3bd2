"""GET /api/v1/coupons/{id}/proof and the offline check of a saved proof
(scripts/auditors/verify_coupon_proof.py, run without Django)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from coupons.evidence.checkpoint_keys import public_key_text
from coupons.services import coupon_issue
from operations.checkpoint import ledger_checkpoint
from tests.api.roles import machine
from tests.coupons.checkpoints.conftest import rewrite, save_json
from tests.coupons.checkpoints.test_journal_log import sequence

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "auditors" / "verify_coupon_proof.py"
# Runs the script as an auditor would, with Django unimportable: it must not need it.
WITHOUT_DJANGO = ("import runpy, sys; sys.modules['django'] = None; "
                  "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")

pytestmark = pytest.mark.django_db


def proof_of(reader, coupon_id):
    response = reader.get(f"/api/v1/coupons/{coupon_id}/proof")
    assert response.status_code == 200
    return response.json()


def offline(proof: dict, public_key: str, tmp_path) -> tuple[int, str]:
    path = save_json(tmp_path / "proof.json", proof)
    done = subprocess.run([sys.executable, "-c", WITHOUT_DJANGO, str(SCRIPT), path,
                           "--public-key", public_key], capture_output=True, text=True,
                          timeout=60)
    return done.returncode, done.stdout + done.stderr


def signed(*, sequenced=True):
    """The journal sequenced (as its cron does before every checkpoint), then signed."""
    if sequenced:
        sequence()
    ledger_checkpoint()


def test_a_checkpointed_coupon_s_proof_verifies_offline(redeemed, reader, checkpoint_dir,
                                                        public_key, tmp_path):
    signed()

    proof = proof_of(reader, redeemed.pk)

    assert [row["to_version"] for row in proof["operations"]] == [1, 2, 3]
    assert "leaf" not in proof and "content_hash" not in proof["operations"][0]
    status, out = offline(proof, public_key, tmp_path)
    assert (status, out.splitlines()[0]) == (
        0, f"OK: coupon {redeemed.pk}: rows v1..v3 are in the journal log signed as checkpoint "
           f"1 at 2026-06-01T12:00:00Z; 5 of 5 journal entries are in the journal log signed "
           f"there")


def test_rows_newer_than_the_checkpoint_are_shown_as_not_covered(
        redeemed, coupon, ctx, reader, checkpoint_dir, public_key, tmp_path):
    from coupons.services import coupon_void

    signed()
    coupon_void(coupon_id=redeemed.pk, expected_version=3, reason="fraud", ctx=ctx)

    status, out = offline(proof_of(reader, redeemed.pk), public_key, tmp_path)

    assert status == 0 and "1 newer row(s) not covered yet" in out


def test_the_offline_check_rejects_a_history_rewritten_after_the_checkpoint(
        redeemed, reader, checkpoint_dir, public_key, tmp_path):
    """The row and its entry rewritten to agree: the entry no longer leads to the signed root,
    so the server serves no path for it and the script fails the proof, quoting why."""
    signed()
    rewrite(redeemed, 2, actor="attacker")

    status, out = offline(proof_of(reader, redeemed.pk), public_key, tmp_path)

    assert status == 1
    assert "the server served no inclusion path: The stored journal log does not lead" in out


def test_the_offline_check_rejects_an_edited_row_and_another_key(
        redeemed, reader, checkpoint_dir, public_key, tmp_path):
    signed()
    proof = proof_of(reader, redeemed.pk)
    edited = json.loads(json.dumps(proof))
    edited["operations"][2]["op_type"] = "RELEASE"
    other_key = public_key_text(Ed25519PrivateKey.from_private_bytes(b"\x02" * 32).public_key())

    assert ("FAILED: ledger row v3: op_type differ from its journal entry"
            in offline(edited, public_key, tmp_path)[1])
    status, out = offline(proof, other_key, tmp_path)
    assert status == 1 and "signature does not verify" in out


def test_before_any_checkpoint_the_proof_says_so(redeemed, reader, public_key, tmp_path):
    proof = proof_of(reader, redeemed.pk)

    assert (proof["checkpoint"], proof["journal_head"]) == (None, None)
    assert offline(proof, public_key, tmp_path) == (
        1, "FAILED: no checkpoint covers this coupon yet (the proof names none)\n")


def test_a_coupon_issued_after_the_checkpoint_is_not_covered_yet(
        redeemed, template, ctx, reader, checkpoint_dir, public_key, tmp_path):
    signed()
    later = coupon_issue(template_id=template.pk, user_id="late", ctx=ctx).coupon

    proof = proof_of(reader, later.pk)

    assert proof["checkpoint"] is not None
    assert [entry["log_index"] for entry in proof["journal_entries"]] == [None]
    status, out = offline(proof, public_key, tmp_path)
    assert status == 1 and "newer than checkpoint 1: not covered yet" in out


def test_an_unknown_coupon_is_a_404_and_the_proof_needs_read_coupons(redeemed):
    unknown = machine("reader-404", capabilities=["read_coupons"]).get(
        "/api/v1/coupons/999999/proof")
    refused = machine("no-read", capabilities=["lock_coupon"]).get(
        f"/api/v1/coupons/{redeemed.pk}/proof")

    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "NOT_FOUND")
    assert (refused.status_code, refused.json()["error"]["details"]["capability"]) == (
        403, "read_coupons")

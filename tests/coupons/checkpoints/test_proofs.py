"""GET /api/v1/coupons/{id}/proof and the offline check of a saved proof
(scripts/verify_coupon_proof.py, run without Django)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from coupons.evidence import merkle
from coupons.evidence.checkpoint_keys import public_key_text
from coupons.services import coupon_issue
from operations.checkpoint import ledger_checkpoint
from tests.api.roles import machine
from tests.coupons.checkpoints.conftest import rewrite_and_rechain, save_json

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "verify_coupon_proof.py"
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


def test_a_checkpointed_coupon_s_proof_verifies_offline(redeemed, template, ctx, reader,
                                                        checkpoint_dir, public_key, tmp_path):
    for n in range(4):  # more leaves than one, so the path is not empty
        coupon_issue(template_id=template.pk, user_id=f"other-{n}", ctx=ctx)
    ledger_checkpoint()

    proof = proof_of(reader, redeemed.pk)

    assert [row["to_version"] for row in proof["operations"]] == [1, 2, 3]
    assert proof["leaf"] == {"index": 0, "coupon_id": redeemed.pk, "version": 3,
                             "head_hash": proof["operations"][-1]["content_hash"]}
    assert len(proof["inclusion_path"]) == 3  # five leaves
    status, out = offline(proof, public_key, tmp_path)
    assert (status, out.splitlines()[0]) == (
        0, f"OK: coupon {redeemed.pk}: rows v1..v3 are the ones signed in checkpoint 1 at "
           f"2026-06-01T12:00:00Z; 0 of 5 journal entries are in the journal log signed there")


def test_a_proof_past_the_first_chunk_names_its_place_in_the_whole_tree(
        redeemed, template, ctx, reader, checkpoint_dir, public_key, tmp_path, monkeypatch):
    """Chunks of two leaves, five coupons: the last one is leaf 4, the first of chunk 2. Its
    index counts the chunks before it, or the auditor's check lands on another leaf."""
    monkeypatch.setattr(merkle, "CHUNK", 2)
    for n in range(4):
        last = coupon_issue(template_id=template.pk, user_id=f"other-{n}", ctx=ctx).coupon
    ledger_checkpoint()

    proof = proof_of(reader, last.pk)

    assert (proof["leaf"]["index"], proof["checkpoint"]["signed"].count('"tree_size":5')) == (
        4, 1)
    status, out = offline(proof, public_key, tmp_path)
    assert (status, out.splitlines()[0]) == (
        0, f"OK: coupon {last.pk}: rows v1..v1 are the ones signed in checkpoint 1 at "
           f"2026-06-01T12:00:00Z; 0 of 1 journal entries are in the journal log signed there")


def test_rows_newer_than_the_checkpoint_are_shown_as_not_covered(
        redeemed, coupon, ctx, reader, checkpoint_dir, public_key, tmp_path):
    from coupons.services import coupon_void

    ledger_checkpoint()
    coupon_void(coupon_id=redeemed.pk, expected_version=3, reason="fraud", ctx=ctx)

    status, out = offline(proof_of(reader, redeemed.pk), public_key, tmp_path)

    assert status == 0 and "1 newer row(s) not covered yet" in out


def test_the_offline_check_rejects_a_history_rewritten_after_the_checkpoint(
        redeemed, reader, checkpoint_dir, public_key, tmp_path):
    ledger_checkpoint()
    rewrite_and_rechain(redeemed, 2, actor="attacker")

    status, out = offline(proof_of(reader, redeemed.pk), public_key, tmp_path)

    assert status == 1
    assert "FAILED: row v3 is not the one checkpoint 1 signed" in out


def test_the_offline_check_rejects_a_forged_leaf_a_broken_link_and_another_key(
        redeemed, reader, checkpoint_dir, public_key, tmp_path):
    ledger_checkpoint()
    proof = proof_of(reader, redeemed.pk)
    head = proof["operations"][1]["content_hash"]
    forged_leaf = {**proof, "leaf": {**proof["leaf"], "version": 2, "head_hash": head}}
    unlinked = json.loads(json.dumps(proof))
    unlinked["operations"][2]["prev_hash"] = "0" * 64
    other_key = public_key_text(Ed25519PrivateKey.from_private_bytes(b"\x02" * 32).public_key())

    assert "is not in the tree signed" in offline(forged_leaf, public_key, tmp_path)[1]
    assert "row v3 does not follow the row before it" in offline(unlinked, public_key,
                                                                 tmp_path)[1]
    status, out = offline(proof, other_key, tmp_path)
    assert status == 1 and "signature does not verify" in out


def test_before_any_checkpoint_the_proof_says_so(redeemed, reader, public_key, tmp_path):
    proof = proof_of(reader, redeemed.pk)

    assert (proof["checkpoint"], proof["leaf"], proof["inclusion_path"]) == (None, None, [])
    assert offline(proof, public_key, tmp_path) == (
        1, "FAILED: no checkpoint covers this coupon yet (the proof names none)\n")


def test_a_coupon_issued_after_the_checkpoint_has_no_leaf(
        redeemed, template, ctx, reader, checkpoint_dir):
    ledger_checkpoint()
    later = coupon_issue(template_id=template.pk, user_id="late", ctx=ctx).coupon

    proof = proof_of(reader, later.pk)

    assert proof["checkpoint"] is not None and proof["leaf"] is None


def test_an_unknown_coupon_is_a_404_and_the_proof_needs_read_coupons(redeemed):
    unknown = machine("reader-404", capabilities=["read_coupons"]).get(
        "/api/v1/coupons/999999/proof")
    refused = machine("no-read", capabilities=["lock_coupon"]).get(
        f"/api/v1/coupons/{redeemed.pk}/proof")

    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "NOT_FOUND")
    assert (refused.status_code, refused.json()["error"]["details"]["capability"]) == (
        403, "read_coupons")

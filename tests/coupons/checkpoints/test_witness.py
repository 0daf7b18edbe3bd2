"""scripts/auditors/ledger_witness.py, run as a witness would, without Django: it accepts signed
journal heads that extend the one it kept, and refuses a rewritten or forked log, a fresh key
and a forged document, keeping its state as it was."""

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from coupons.evidence import merkle
from coupons.evidence.checkpoint_keys import sign, signing_key
from coupons.models import ConflictCase, JournalLeaf
from operations.checkpoint import ledger_checkpoint
from tests.app_role import past_the_triggers
from tests.coupons.checkpoints.conftest import checkpoint_file, save_json
from tests.coupons.checkpoints.test_journal_log import open_cases, sequence
from tests.coupons.checkpoints.test_journal_verify import (
    BEFORE,
    filled_to_before,
    rewrite_consistently,
)
from tests.coupons.checkpoints.test_proofs import WITHOUT_DJANGO

WITNESS = Path(__file__).resolve().parents[3] / "scripts" / "auditors" / "ledger_witness.py"

pytestmark = pytest.mark.django_db


def run_witness(state, *args) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-c", WITHOUT_DJANGO, str(WITNESS), "--state",
                           str(state), *map(str, args)], capture_output=True, text=True,
                          timeout=60)
    return done.returncode, done.stdout + done.stderr


def signed_at(directory, number: int) -> dict:
    return json.loads(json.loads(checkpoint_file(directory, number).read_text())["signed"])


@pytest.fixture
def redeemed(redeemed):
    """The coupon's own entries and three cases fill log positions 0..7."""
    return filled_to_before(redeemed)


@pytest.fixture
def witnessed(redeemed, checkpoint_dir, public_key, tmp_path):
    """The witness accepted checkpoint 1 (journal of BEFORE + 3 entries)."""
    open_cases(redeemed, 3)
    sequence()
    ledger_checkpoint()
    state = tmp_path / "witness.json"
    assert run_witness(state, checkpoint_dir, "--public-key", public_key)[0] == 0
    return state


def test_a_consistent_sequence_of_heads_is_accepted_in_order(
        witnessed, redeemed, checkpoint_dir):
    for start in (3, 5):
        open_cases(redeemed, 2, start=start)
        sequence()
        ledger_checkpoint()
    ledger_checkpoint()  # nothing sequenced since 3 (its entry waits): same head, empty proof

    status, out = run_witness(witnessed, checkpoint_dir)

    assert (status, out) == (0, f"accepted checkpoints 2, 3, 4: the journal is 17 entries, root "
                                f"{signed_at(checkpoint_dir, 4)['journal_root']}\n")
    assert json.loads(json.loads(witnessed.read_text())["checkpoint"]["signed"])["number"] == 4
    assert run_witness(witnessed, checkpoint_dir) == (0, "nothing new since checkpoint 4\n")


def test_a_log_rewritten_below_the_witnessed_size_and_signed_again_is_refused(
        witnessed, redeemed, checkpoint_dir, tmp_path, broken_on_purpose):
    """The holder of the signing key signs a continuation of a rewritten log: the signature
    holds, the consistency proof from the witnessed head cannot."""
    before = witnessed.read_text()
    open_cases(redeemed, 2, start=3)
    sequence()
    rewrite_consistently(BEFORE + 1, '"n":1', '"n":9')
    broken_on_purpose.add(redeemed.pk)
    nodes = [merkle.leaf_hash(content.encode()) for content in
             JournalLeaf.objects.order_by("index").values_list("entry__content", flat=True)]
    first = signed_at(checkpoint_dir, 1)
    body = {**first, "number": 2, "previous_number": 1, "journal_size": BEFORE + 5,
            "journal_root": merkle.root_of_nodes(nodes).hex(), "previous_journal_size": BEFORE + 3,
            "previous_journal_root": first["journal_root"],
            "journal_consistency": [n.hex() for n in merkle.consistency_proof(BEFORE + 3, nodes)]}
    text, signature = sign(body, signing_key())
    forged = save_json(tmp_path / "checkpoint-00000002.json",
                       {"signed": text, "signature": signature})

    status, out = run_witness(witnessed, forged)

    assert status == 1
    assert out == ("REFUSED: checkpoint-00000002.json: the journal signed as checkpoint 2 (13 "
                   "entries) is not an extension of the 11 entries this witness accepted at "
                   "checkpoint 1: the log was rewritten or forked\n")
    assert witnessed.read_text() == before


def test_a_checkpoint_under_a_fresh_key_is_refused(witnessed, redeemed, tmp_path, settings):
    """The owner rewrites the log and the row (so the coupon's check passes) and signs it
    with a key of their own, in a directory of their own: the new signer starts a chain of its
    own, which the witness does not take."""
    before = witnessed.read_text()
    rewrite_consistently(BEFORE + 1, '"n":1', '"n":9')
    with past_the_triggers():
        ConflictCase.objects.filter(evidence={"n": 1}).update(evidence={"n": 9})
    fresh = Ed25519PrivateKey.generate()
    settings.LEDGER_SIGNING_KEY = base64.b64encode(fresh.private_bytes(
        Encoding.Raw, PrivateFormat.Raw, NoEncryption())).decode()
    settings.LEDGER_CHECKPOINT_DIR = str(tmp_path / "theirs")
    ledger_checkpoint()

    status, out = run_witness(witnessed, tmp_path / "theirs")

    assert status == 1
    assert out == ("REFUSED: checkpoint-00000001.json: its signature does not verify under "
                   "the witnessed key\n")
    assert witnessed.read_text() == before


def test_an_edited_document_and_a_second_checkpoint_1_are_refused(
        witnessed, checkpoint_dir, tmp_path):
    before = witnessed.read_text()
    document = json.loads(checkpoint_file(checkpoint_dir, 1).read_text())
    body = json.loads(document["signed"])
    edited = {**document, "signed": json.dumps({**body, "number": 2, "previous_number": 1})}
    status, out = run_witness(witnessed, save_json(tmp_path / "edited.json", edited))
    assert (status, out) == (1, "REFUSED: edited.json: its signature does not verify under "
                                "the witnessed key\n")

    text, signature = sign({**body, "time": "2026-06-01T12:05:00Z"}, signing_key())
    other = save_json(tmp_path / "other.json", {"signed": text, "signature": signature})
    status, out = run_witness(witnessed, other)
    assert (status, out) == (1, "REFUSED: other.json: another checkpoint 1 than the one this "
                                "witness accepted: the log forked\n")
    assert witnessed.read_text() == before


def test_a_checkpoint_that_skips_one_the_witness_has_not_seen_is_refused(
        witnessed, redeemed, checkpoint_dir):
    open_cases(redeemed, 1, start=3)
    sequence()
    ledger_checkpoint()
    ledger_checkpoint()

    status, out = run_witness(witnessed, checkpoint_file(checkpoint_dir, 3))

    assert status == 1
    assert "names checkpoint 2 as its previous, not checkpoint 1" in out


def test_another_key_than_the_kept_one_is_refused(witnessed, checkpoint_dir):
    before = witnessed.read_text()
    other = base64.b64encode(Ed25519PrivateKey.generate().public_key().public_bytes_raw()).decode()

    status, out = run_witness(witnessed, checkpoint_dir, "--public-key", other)

    assert (status, out) == (1, "REFUSED: --public-key is not the key this witness keeps: a "
                                "new key is a new log, start a new state file deliberately\n")
    assert witnessed.read_text() == before

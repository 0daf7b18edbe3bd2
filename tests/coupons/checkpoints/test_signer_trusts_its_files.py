"""The signer's chain lives in its own files; the database's checkpoint rows are a copy it
publishes and never reads back as truth. What the application's login does to that copy (a
genuine row copied under a higher number, a forged one, one held uncommitted) or the owner (a
row deleted) changes nothing it signs: each is a finding, exit status 3, and the chain goes on
unforked, as the witness sees (operations/checkpoint.py, operations/signer_files.py)."""

import fcntl
import io
import json

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from coupons.models import LedgerCheckpoint
from operations import checkpoint as signer
from operations.checkpoint import ledger_checkpoint
from operations.signer_files import LOCK_FILE
from tests.app_role import past_the_triggers
from tests.coupons.checkpoints.conftest import checkpoint_file
from tests.coupons.checkpoints.test_journal_log import open_cases, sequence
from tests.coupons.checkpoints.test_witness import run_witness
from tests.coupons.safety.test_db_roles import app_login

pytestmark = pytest.mark.django_db


def run_signer() -> tuple[int, str]:
    err = io.StringIO()
    try:
        call_command("ledger_checkpoint", stdout=io.StringIO(), stderr=err)
    except SystemExit as exit_:
        return exit_.code, err.getvalue()
    return 0, err.getvalue()


def copy_row(number: int, as_number: int) -> int:
    """What the application's login can do: INSERT ... SELECT of a genuine row."""
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO coupons_ledgercheckpoint (number, signed_at, key_id, body, "
                       "signature) SELECT %s, signed_at, key_id, body, signature FROM "
                       "coupons_ledgercheckpoint WHERE number = %s RETURNING id",
                       [as_number, number])
        return cursor.fetchone()[0]


def chain(directory) -> list[tuple[int, int | None]]:
    bodies = [json.loads(json.loads(path.read_text())["signed"])
              for path in sorted(directory.glob("checkpoint-*.json"))]
    return [(body["number"], body["previous_number"]) for body in bodies]


def test_a_copied_row_under_the_next_number_forks_nothing_and_the_witness_follows(
        redeemed, checkpoint_dir, public_key, tmp_path):
    sequence()
    ledger_checkpoint()
    ledger_checkpoint()
    state = tmp_path / "witness.json"
    assert run_witness(state, checkpoint_dir, "--public-key", public_key)[0] == 0
    copy = copy_row(1, as_number=3)

    first = run_signer()
    open_cases(redeemed, 2)
    sequence()
    second = run_signer()

    assert first[0] == second[0] == 3
    for _, err in (first, second):
        assert (f"FINDING: checkpoint row {copy} numbered 3 is not the checkpoint this signer "
                "signed as 3: a copy or a forgery, ignored") in err, err
    assert chain(checkpoint_dir) == [(1, None), (2, 1), (3, 2), (4, 3)]
    status, out = run_witness(state, checkpoint_dir)
    assert (status, out.split(":")[0]) == (0, "accepted checkpoints 3, 4")
    # The newest checkpoint the database shows is the newest signed, not the copy.
    assert json.loads(LedgerCheckpoint.objects.get(number=4).body)["previous_number"] == 3


def test_a_forged_future_row_and_a_deleted_one_change_nothing_the_signer_signs(
        redeemed, checkpoint_dir):
    sequence()
    ledger_checkpoint()
    forged = LedgerCheckpoint.objects.create(number=2, signed_at=redeemed.issued_at,
                                             key_id="k", body="{}", signature="AAAA")
    with past_the_triggers():
        LedgerCheckpoint.objects.filter(number=1).delete()

    status, err = run_signer()

    assert status == 3
    assert (f"FINDING: checkpoint row {forged.pk} numbered 2 is not the checkpoint this signer "
            "signed as 2") in err, err
    assert "FINDING: checkpoint 1 has no row in the database: published again" in err, err
    assert chain(checkpoint_dir) == [(1, None), (2, 1)]
    republished = LedgerCheckpoint.objects.get(number=1)
    assert json.loads(checkpoint_file(checkpoint_dir, 1).read_text()) == {
        "signed": republished.body, "signature": republished.signature}


def test_a_row_the_app_login_holds_uncommitted_under_the_number_is_waited_for_a_bounded_time(
        redeemed, checkpoint_dir, monkeypatch):
    sequence()
    ledger_checkpoint()
    monkeypatch.setattr(signer, "LOCK_TIMEOUT", "200ms")
    with app_login() as app, app.transaction() as held:
        app.execute("SELECT set_config('coupons.actor', 'user:mallory', true)")
        app.execute("INSERT INTO coupons_ledgercheckpoint (number, signed_at, key_id, body, "
                    "signature) VALUES (2, now(), 'k', '{}', 'AAAA')")

        run = ledger_checkpoint()
        # Never committed: the row would outlive the test (its connection is not the test's).
        raise psycopg.Rollback(held)

    assert run.checkpoint.number == 2 and checkpoint_file(checkpoint_dir, 2).exists()
    assert any(finding.startswith("checkpoint 2 could not be published in the database (")
               and "lock timeout" in finding for finding in run.findings), run.findings


def test_a_second_signer_gives_up_after_its_wait_with_status_75(
        redeemed, checkpoint_dir, monkeypatch):
    ledger_checkpoint()
    monkeypatch.setattr(signer, "DIRECTORY_WAIT_SECONDS", 0.1)
    with open(checkpoint_dir / LOCK_FILE, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)

        status, err = run_signer()

    assert status == 75
    assert err == (f"ledger_checkpoint: another ledger_checkpoint holds "
                   f"{checkpoint_dir / LOCK_FILE} (waited 0.1 s); nothing signed\n")
    assert chain(checkpoint_dir) == [(1, None)]

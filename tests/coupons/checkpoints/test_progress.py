"""verify_ledger says how far it has read the journal's log, on stderr, its report on stdout."""

from io import StringIO

import pytest
from django.core.management import call_command

from operations.checkpoint import ledger_checkpoint
from tests.coupons.checkpoints.conftest import checkpoint_file
from tests.coupons.checkpoints.test_journal_log import sequence

pytestmark = pytest.mark.django_db


def test_verify_ledger_reports_its_progress_on_stderr(redeemed, checkpoint_dir, public_key):
    sequence()
    ledger_checkpoint()
    out, err = StringIO(), StringIO()

    call_command("verify_ledger", "--checkpoint", str(checkpoint_file(checkpoint_dir)),
                 "--public-key", public_key, stdout=out, stderr=err)

    assert err.getvalue().startswith("verify_ledger: 5 of 5 log positions (100%)")
    assert out.getvalue() == ("checkpoint 1 holds: 1 signed checkpoints and 5 journal log "
                              "positions checked\n")


def test_quiet_leaves_stderr_empty(redeemed, checkpoint_dir, public_key):
    sequence()
    ledger_checkpoint()
    err = StringIO()

    call_command("verify_ledger", "--checkpoint", str(checkpoint_file(checkpoint_dir)),
                 "--public-key", public_key, "--quiet", stdout=StringIO(), stderr=err)

    assert err.getvalue() == ""


def test_the_signer_reports_reading_the_log_and_its_findings_stay_apart(redeemed,
                                                                         checkpoint_dir):
    sequence()
    out, err = StringIO(), StringIO()

    call_command("ledger_checkpoint", stdout=out, stderr=err)

    [line] = err.getvalue().splitlines()
    assert line.startswith("ledger_checkpoint: 5 of 5 log positions (100%), ")
    assert out.getvalue().startswith("checkpoint 1: journal of 5 entries")

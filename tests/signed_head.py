"""What cron does between two views of a coupon: sequence the journal and sign a head over it
(operations/checkpoint.py). The check's watermark rests on such a head
(coupons/evidence/check_watermark.py)."""

import io
import json

from django.core.management import call_command
from django.test import override_settings

from operations.checkpoint import ledger_checkpoint


def sequence() -> None:
    """Log positions for every entry written so far, signed by no head yet."""
    call_command("sequence_journal", stdout=io.StringIO())


def sign_head(directory) -> int:
    """Sequences every entry and signs a checkpoint, its files in `directory` (a test's own, so
    no other test's files become this signer's chain); the journal size it signed."""
    sequence()
    with override_settings(LEDGER_CHECKPOINT_DIR=str(directory)):
        run = ledger_checkpoint()
    return json.loads(run.checkpoint.body)["journal_size"]

import json

from django.core.management.base import BaseCommand, CommandError

from coupons.evidence.checkpoint_keys import KeyProblem
from operations.checkpoint import CheckpointRefused, ledger_checkpoint


class Command(BaseCommand):
    help = ("Sign the head of the journal's Merkle log (LEDGER_SIGNING_KEY) and keep it "
            "in the database, on the coupons exchange (outbox) and in LEDGER_CHECKPOINT_DIR. "
            "Cron, every 10 minutes.")

    def handle(self, *args, **options):
        try:
            run = ledger_checkpoint()
        except (KeyProblem, CheckpointRefused) as refused:
            raise CommandError(str(refused)) from refused
        checkpoint = run.checkpoint
        body = json.loads(checkpoint.body)
        self.stdout.write(
            f"checkpoint {checkpoint.number}: journal of {body['journal_size']} entries, root "
            f"{body['journal_root']}")
        for path in run.files_written:
            self.stdout.write(f"wrote {path}")
        if run.ignored_rows:
            # Someone inserted them: an alert, not a reason to stop signing.
            self.stderr.write(
                f"ignored {len(run.ignored_rows)} stored checkpoint rows this signer did not "
                f"sign (ids {', '.join(map(str, run.ignored_rows[:20]))})")

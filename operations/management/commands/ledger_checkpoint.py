import json
import sys

from django.core.management.base import BaseCommand, CommandError

from common.progress import command_progress
from coupons.evidence.checkpoint_keys import KeyProblem
from operations.checkpoint import CheckpointRefused, ledger_checkpoint
from operations.signer_files import SignerBusy

# Signed, but something disagrees with the signer's record: alert on it, it keeps signing.
EXIT_FINDINGS = 3
# Another signer holds the directory: nothing signed, the next run signs (sysexits' TEMPFAIL).
EXIT_BUSY = 75


class Command(BaseCommand):
    help = ("Sign the head of the journal's Merkle log (LEDGER_SIGNING_KEY) and keep it in "
            "LEDGER_CHECKPOINT_DIR, in the database and on the coupons exchange (outbox). "
            "Cron, every 10 minutes. Exit 0 signed; 3 signed, with findings (printed); 1 "
            "refused (its own files were changed); 75 another signer is running.")

    def add_arguments(self, parser):
        parser.add_argument("--new-chain", action="store_true",
                            help="after a deliberate repair: move every checkpoint and leaves "
                            "file into a superseded-<time> folder of LEDGER_CHECKPOINT_DIR and "
                            "sign the first checkpoint of a new chain (tell the witnesses)")
        parser.add_argument("--quiet", action="store_true",
                            help="no progress on stderr while the journal's log is read (a "
                            "bar on a terminal, else a line every 10 s with the time left)")

    def handle(self, *args, new_chain=False, quiet=False, **options):
        progress = command_progress(self, "ledger_checkpoint", None, unit="log positions",
                                    quiet=quiet)
        try:
            run = ledger_checkpoint(new_chain=new_chain, progress=progress)
        except (KeyProblem, CheckpointRefused) as refused:
            raise CommandError(str(refused)) from refused
        except SignerBusy as busy:
            self.stderr.write(f"ledger_checkpoint: {busy}")
            sys.exit(EXIT_BUSY)
        progress.finish()
        checkpoint = run.checkpoint
        body = json.loads(checkpoint.body)
        self.stdout.write(
            f"checkpoint {checkpoint.number}: journal of {body['journal_size']} entries, root "
            f"{body['journal_root']}")
        for path in run.files_written:
            self.stdout.write(f"wrote {path}")
        for finding in run.findings:
            self.stderr.write(f"FINDING: {finding}")
        if run.findings:
            self.stderr.write(f"signed, with {len(run.findings)} findings")
            sys.exit(EXIT_FINDINGS)

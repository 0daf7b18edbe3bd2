import json
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from coupons.evidence.checkpoint_keys import KeyProblem, public_key_from_text, signing_key
from coupons.evidence.checkpoint_verify import verify_checkpoint


class Command(BaseCommand):
    help = ("Check a signed checkpoint file against the database: its signature, every coupon's "
            "history up to the checkpointed version, every chain since, and the previous "
            "checkpoint. Exit 0 when all holds, 1 naming each broken coupon.")

    def add_arguments(self, parser):
        parser.add_argument("--checkpoint", required=True, help="a file written by "
                            "ledger_checkpoint (from LEDGER_CHECKPOINT_DIR or its copy)")
        parser.add_argument("--public-key", help="base64 or PEM, or a file holding it; default: "
                            "the public half of LEDGER_SIGNING_KEY")

    def handle(self, *args, checkpoint, public_key=None, **options):
        try:
            key = self._public_key(public_key)
        except KeyProblem as problem:
            raise CommandError(str(problem)) from problem
        try:
            document = json.loads(Path(checkpoint).read_text())
        except (OSError, ValueError) as bad:
            raise CommandError(f"cannot read the checkpoint file {checkpoint}: {bad}") from bad
        verdict = verify_checkpoint(document if isinstance(document, dict) else {}, key)
        for problem in verdict.problems:
            self.stdout.write(f"BROKEN: {problem}")
        for coupon_id in sorted(verdict.broken):
            for problem in verdict.broken[coupon_id]:
                self.stdout.write(f"BROKEN coupon {coupon_id}: {problem}")
        if verdict.ok:
            self.stdout.write(f"checkpoint {verdict.number} holds: {verdict.coupons_checked} "
                              f"coupons checked")
            return
        if verdict.broken:
            self.stdout.write("broken coupons: " + ", ".join(map(str, sorted(verdict.broken))))
        sys.exit(1)

    @staticmethod
    def _public_key(text):
        if text is None:
            if not settings.LEDGER_SIGNING_KEY:
                raise KeyProblem("give --public-key (the key `manage.py ledger_public_key` "
                                 "prints where the checkpoints are signed)")
            return signing_key().public_key()
        path = Path(text)
        if len(text) < 4096 and path.is_file():
            text = path.read_text()
        return public_key_from_text(text)

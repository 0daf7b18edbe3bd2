import json
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from common.progress import command_progress
from coupons.evidence.checkpoint_keys import KeyProblem, public_key_from_text, signing_key
from coupons.evidence.checkpoint_verify import (
    Verdict,
    signed_body,
    signed_chain,
    verify_checkpoint,
)
from coupons.evidence.journal_verify import verify_journal
from coupons.evidence.signed_leaves import leaves_in
from coupons.models import JournalLeaf


class Command(BaseCommand):
    help = ("Check signed checkpoint files against the database: their signatures and chain, "
            "the journal's Merkle log against every signed journal head, and every journaled "
            "row against its entries. Exit 0 when all holds, 1 naming each broken coupon, log "
            "position and entry.")

    def add_arguments(self, parser):
        parser.add_argument("--checkpoint", required=True, action="append",
                            help="a file written by ledger_checkpoint (from "
                            "LEDGER_CHECKPOINT_DIR or its copy), or a directory of them; "
                            "repeat it to give more. The newest is checked against the "
                            "database; the ones it does not name are read from it")
        parser.add_argument("--public-key", help="base64 or PEM, or a file holding it; default: "
                            "the public half of LEDGER_SIGNING_KEY")
        parser.add_argument("--quiet", action="store_true",
                            help="no progress on stderr (a bar on a terminal, else a line "
                            "every 10 s with the rate and the time left). A verification "
                            "changes nothing: interrupted, it is run again from the start")

    def handle(self, *args, checkpoint, public_key=None, quiet=False, **options):
        try:
            key = self._public_key(public_key)
        except KeyProblem as problem:
            raise CommandError(str(problem)) from problem
        documents = self._documents(checkpoint)
        verdict = Verdict()
        chain = signed_chain(documents, key, verdict)
        if chain:
            newest = next(document for name, document in documents
                          if signed_body(document, key) == chain[-1])
            ledger = verify_checkpoint(newest, key)
            verdict.number = ledger.number
            verdict.problems[:0] = ledger.problems
            progress = command_progress(self, "verify_ledger", JournalLeaf.objects.count(),
                                        unit="log positions", quiet=quiet)
            verify_journal(chain, verdict, self._leaves(checkpoint), progress=progress)
            progress.finish()
        for problem in verdict.problems:
            self.stdout.write(f"BROKEN: {problem}")
        for coupon_id in sorted(verdict.broken):
            for problem in verdict.broken[coupon_id]:
                self.stdout.write(f"BROKEN coupon {coupon_id}: {problem}")
        if verdict.ok:
            self.stdout.write(f"checkpoint {verdict.number} holds: "
                              f"{verdict.checkpoints_checked} signed checkpoints and "
                              f"{verdict.journal_positions} journal log positions checked")
            return
        if verdict.broken:
            self.stdout.write("broken coupons: " + ", ".join(map(str, sorted(verdict.broken))))
        sys.exit(1)

    @staticmethod
    def _documents(given: list[str]) -> list[tuple[str, dict]]:
        paths = []
        for text in given:
            path = Path(text)
            paths.extend(sorted(path.glob("checkpoint-*.json")) if path.is_dir() else [path])
        documents = []
        for path in paths:
            try:
                document = json.loads(path.read_text())
            except (OSError, ValueError) as bad:
                raise CommandError(f"cannot read the checkpoint file {path}: {bad}") from bad
            documents.append((path.name, document if isinstance(document, dict) else {}))
        return documents

    @staticmethod
    def _leaves(given: list[str]) -> dict[int, list[bytes]]:
        """The signer's leaves files in the given directories and beside the given files."""
        return leaves_in({path if path.is_dir() else path.parent for path in map(Path, given)})

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

from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = ("The demo's database as production has it, as the owner: migrate, setup_db_roles "
            "(the application role the demo server then logs in as), then seed_demo (a no-op "
            "once seeded). bin/run-demo runs it on every start.")

    def add_arguments(self, parser):
        parser.add_argument("--key-file", type=Path,
                            help="seed_demo's: also write the demo API key to this file.")

    def handle(self, *args, key_file=None, **options):
        quiet = {"verbosity": 0, "stdout": self.stdout, "stderr": self.stderr}
        call_command("migrate", interactive=False, **quiet)
        # Always: the journal's trigger functions come from the models through it, and the ones
        # migrations left behind would journal rows the services then cannot fold.
        call_command("setup_db_roles", **quiet)
        call_command("seed_demo", key_file=key_file, stdout=self.stdout, stderr=self.stderr)

"""Give every committed journal entry without one the next log position (cron, every minute,
before ledger_checkpoint). Runs the sequencer function (operations/db_roles.py), in batches,
until none is left; prints how many and how fast. Another sequencer holding the log past
--lock-timeout: it says so and exits 75 (sysexits' TEMPFAIL), having sequenced what it did."""

import sys
import time

from django.core.management.base import BaseCommand
from django.db import OperationalError, connection, transaction

from operations.db_roles import SEQUENCE_FUNCTION

BATCH = 10_000
EXIT_BUSY = 75
LOCK_NOT_AVAILABLE = "55P03"


class Command(BaseCommand):
    help = ("Sequence the journal: consecutive Merkle log positions for new entries. Exit 0, or "
            "75 when another sequencer held the log past --lock-timeout.")

    def add_arguments(self, parser):
        parser.add_argument("--lock-timeout", type=float, default=10.0,
                            help="seconds to wait for another sequencer (the function never "
                            "waits longer than its own bound, 10 s)")

    def handle(self, *args, lock_timeout=10.0, **options):
        started, total = time.monotonic(), 0
        while True:
            try:
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute("SELECT set_config('lock_timeout', %s, true)",
                                   [f"{int(lock_timeout * 1000)}ms"])
                    cursor.execute(f"SELECT {SEQUENCE_FUNCTION}(%s)", [BATCH])
                    (added,) = cursor.fetchone()
            except OperationalError as waited:
                if getattr(waited.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                    raise
                self.stderr.write(
                    f"sequence_journal: another sequencer held the journal log for "
                    f"{lock_timeout:g} s; {total} journal entries sequenced, the next run "
                    "sequences the rest")
                sys.exit(EXIT_BUSY)
            total += added
            if added < BATCH:
                break
        seconds = time.monotonic() - started
        rate = f", {total / seconds:.0f} entries/s" if total and seconds else ""
        self.stdout.write(f"{total} journal entries sequenced in {seconds:.2f} s{rate}")

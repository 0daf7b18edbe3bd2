"""Give every committed journal entry without one the next log position (cron, every minute,
before ledger_checkpoint). Runs the sequencer function (operations/db_roles.py), in batches,
until none is left; prints how many and how fast."""

import time

from django.core.management.base import BaseCommand
from django.db import connection, transaction

from operations.db_roles import SEQUENCE_FUNCTION

BATCH = 10_000


class Command(BaseCommand):
    help = "Sequence the journal: consecutive Merkle log positions for new entries."

    def handle(self, *args, **options):
        started, total = time.monotonic(), 0
        while True:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"SELECT {SEQUENCE_FUNCTION}(%s)", [BATCH])
                (added,) = cursor.fetchone()
            total += added
            if added < BATCH:
                break
        seconds = time.monotonic() - started
        rate = f", {total / seconds:.0f} entries/s" if total and seconds else ""
        self.stdout.write(f"{total} journal entries sequenced in {seconds:.2f} s{rate}")

"""Options and output shared by the scanner commands."""

import signal
import threading

from django.core.management.base import BaseCommand, CommandError

from operations.scanners import scan_forever


class ScannerCommand(BaseCommand):
    scan = None  # a operations.scanners function

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=100, help="rows per transaction")
        parser.add_argument("--rate", type=float, default=None,
                            help="at most this many commands per second on average, paced between "
                                 "batches (default: no limit)")
        parser.add_argument("--shard", type=int, default=0, help="this scanner's shard, 0..N-1")
        parser.add_argument("--shards", type=int, default=1, help="number of shards N")
        parser.add_argument("--limit", type=int, default=None, help="stop after this many rows")
        parser.add_argument("--quiet", action="store_true", help="print only the summary")
        parser.add_argument("--loop", action="store_true",
                            help="scan again every --interval seconds until SIGTERM, surviving "
                                 "a lost database connection (instead of cron)")
        parser.add_argument("--interval", type=float, default=60.0,
                            help="seconds between two scans with --loop (default 60)")

    def handle(self, *args, batch, rate, shard, shards, limit, quiet, loop, interval, **options):
        if (batch < 1 or shards < 1 or not 0 <= shard < shards
                or (rate is not None and rate <= 0) or (limit is not None and limit < 1)
                or interval <= 0):
            raise CommandError("Need --batch >= 1, --shards >= 1, 0 <= --shard < --shards, "
                               "--rate > 0, --limit >= 1, --interval > 0.")
        progress = None if quiet else (
            lambda report: self.stdout.write(f"batch {report.batches}: {report.summary()}")
        )
        options = dict(batch=batch, rate=rate, shard=shard, shards=shards, limit=limit,
                       progress=progress)
        if loop:
            stop = threading.Event()
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
            try:
                scan_forever(type(self).scan, stop=stop, interval=interval, done=self.summary,
                             report=self.stderr.write, **options)
            except KeyboardInterrupt:
                stop.set()
            return
        self.summary(type(self).scan(**options))

    def summary(self, report) -> None:
        self.stdout.write(f"{self.help.split(':')[0]} done: {report.summary()}")

import sys

from django.core.management.base import BaseCommand, CommandError

from common.progress import command_progress
from coupons.evidence.pruned import unbelievable_prune_runs
from coupons.models import Severity
from operations.reconcile import reconcile_run
from operations.reconcile.exports import ExportUnreadable, reconcile_exports
from operations.reconcile.run import coupons_after, unfinished_run
from operations.selectors import finding_open_counts


class Command(BaseCommand):
    help = ("Run the six reconciliation checks (docs/operating.md) over every coupon in "
            "batches; record "
            "findings, close the ones that no longer hold. Exit status 2 while any P0 finding "
            "is open or a prune run has a cutoff prune cannot have written, so cron or a CI "
            "job can alert on it; repairs are an operator's, never this command's.")

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=None,
                            help="Coupons per batch (default: COUPONS RECONCILE_BATCH_SIZE).")
        parser.add_argument("--resume", action="store_true",
                            help="Go on with the newest run that did not finish (interrupted "
                                 "or killed) after the last coupon it recorded; a new run "
                                 "when every run finished.")
        parser.add_argument("--quiet", action="store_true",
                            help="No progress on stderr (a bar on a terminal, else a line "
                                 "every 10 s with the rate and the time left).")
        parser.add_argument("--orders", metavar="FILE",
                            help="The order system's export (CSV or JSON, docs/operating.md); "
                                 "with --payments, also compares the other two sides.")
        parser.add_argument("--payments", metavar="FILE",
                            help="The payment system's export (CSV or JSON).")

    def handle(self, *args, batch_size, orders, payments, resume, quiet, **options):
        if bool(orders) != bool(payments):
            raise CommandError("--orders and --payments go together")
        run = unfinished_run() if resume else None
        if run is not None:
            self.stdout.write(f"resuming run {run.pk} after coupon {run.last_coupon_id} "
                              f"({run.coupons_checked} checked before)")
        progress = command_progress(self, "reconcile", coupons_after(
            run.last_coupon_id if run else 0), unit="coupons", quiet=quiet)
        try:
            run = reconcile_run(actor="manage.py reconcile", batch_size=batch_size, run=run,
                                progress=progress)
        except KeyboardInterrupt:
            stopped = unfinished_run()
            after = stopped.last_coupon_id if stopped else 0
            self.stderr.write(f"\ninterrupted after coupon {after}: "
                              "`manage.py reconcile --resume` goes on from there")
            sys.exit(130)
        progress.finish()
        seconds = (run.finished_at - run.started_at).total_seconds()
        self.stdout.write(
            f"checked {run.coupons_checked} coupons in {seconds:.1f}s: {run.found_new} new, "
            f"{run.still_open} still open, {run.closed} closed"
        )
        if orders:
            self.compare_exports(orders, payments)
        by_severity = finding_open_counts()
        self.stdout.write("open: " + ", ".join(f"{s} {n}" for s, n in by_severity.items()))
        # Only prune writes prune runs; one it cannot have written is forged evidence.
        forged = unbelievable_prune_runs()
        for run, why in forged:
            self.stdout.write(f"ignored prune run {run.pk}: {why}, so prune did not write it")
        if by_severity[Severity.P0] or forged:
            # Not an error of the command: the data is wrong, and whoever runs it must hear.
            raise SystemExit(2)

    def compare_exports(self, orders, payments):
        try:
            report = reconcile_exports(orders_path=orders, payments_path=payments,
                                       actor="manage.py reconcile")
        except (OSError, ValueError, ExportUnreadable) as error:
            raise CommandError(str(error)) from error
        new, still_open, closed = report.recorded
        self.stdout.write(f"exports: {len(report.found)} found: {new} new, {still_open} still "
                          f"open, {closed} closed")
        for fault in report.found:
            self.stdout.write(f"  {fault.kind} coupon {fault.coupon_id}: {fault.summary}")
        for order_id, coupon_id in report.unknown_coupons:
            self.stdout.write(f"  order {order_id} names coupon {coupon_id!r}, not one of ours")

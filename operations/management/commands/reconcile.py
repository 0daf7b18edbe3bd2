from django.core.management.base import BaseCommand

from coupons.evidence.pruned import unbelievable_prune_runs
from coupons.models import Severity
from operations.reconcile import reconcile_run
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

    def handle(self, *args, batch_size, **options):
        run = reconcile_run(actor="manage.py reconcile", batch_size=batch_size)
        seconds = (run.finished_at - run.started_at).total_seconds()
        self.stdout.write(
            f"checked {run.coupons_checked} coupons in {seconds:.1f}s: {run.found_new} new, "
            f"{run.still_open} still open, {run.closed} closed"
        )
        by_severity = finding_open_counts()
        self.stdout.write("open: " + ", ".join(f"{s} {n}" for s, n in by_severity.items()))
        # Only prune writes prune runs; one it cannot have written is forged evidence.
        forged = unbelievable_prune_runs()
        for run, why in forged:
            self.stdout.write(f"ignored prune run {run.pk}: {why}, so prune did not write it")
        if by_severity[Severity.P0] or forged:
            # Not an error of the command: the data is wrong, and whoever runs it must hear.
            raise SystemExit(2)

from django.core.management.base import BaseCommand

from operations.retention import retention_prune

MINUTE = "%Y-%m-%d %H:%M"


class Command(BaseCommand):
    help = ("Remove published outbox rows, completed Idempotency-Key records and inbox de-dup "
            "rows older than their retention windows (settings.COUPONS).")

    def handle(self, *args, **options):
        run = retention_prune()
        self.stdout.write(
            f"pruned {run.outbox_deleted} outbox rows published before "
            f"{run.outbox_before:{MINUTE}}, {run.idempotency_deleted} idempotency records "
            f"completed before {run.idempotency_before:{MINUTE}}, {run.inbox_deleted} inbox "
            f"messages received before {run.inbox_before:{MINUTE}}"
        )

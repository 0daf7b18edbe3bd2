from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from operations.outbox_partitions import DAYS_AHEAD, outbox_partitions_ahead


class Command(BaseCommand):
    help = ("Make the outbox's day partitions from yesterday to --days ahead (PostgreSQL; run "
            "daily with the owner's login, as migrate is). prune drops them once past.")

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=DAYS_AHEAD)

    def handle(self, *args, days, **options):
        if connection.vendor != "postgresql":
            raise CommandError("outbox partitions exist on PostgreSQL only")
        made = outbox_partitions_ahead(days)
        self.stdout.write(f"outbox partitions in place: {', '.join(made) or 'none'}")

from django.core.management.base import BaseCommand

from operations.outbox_partitions import DAYS_AHEAD, outbox_partitions_ahead


class Command(BaseCommand):
    help = ("Make the outbox's day partitions from yesterday to --days ahead (run daily with "
            "the owner's login, as migrate is). prune drops them once past.")

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=DAYS_AHEAD)

    def handle(self, *args, days, **options):
        made = outbox_partitions_ahead(days)
        self.stdout.write(f"outbox partitions in place: {', '.join(made) or 'none'}")

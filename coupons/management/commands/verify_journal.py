"""Every journal entry against its hash, and every journaled row against its entries.

Reads the whole journal and every decision, compensation and conflict case once, in id order
(memory stays flat), whatever ids they have. Exit status 1 naming each failure, so a scheduler
or CI can alert on it (docs/evidence.md).
"""

from django.core.management.base import BaseCommand, CommandError

from coupons.evidence.journal import journal_problems


class Command(BaseCommand):
    help = "Check every journal entry's hash and that every journaled row is their fold."

    def handle(self, *args, **options):
        broken = 0
        for what, row_id, problem in journal_problems():
            broken += 1
            self.stdout.write(f"{what} id={row_id}: {problem}")
        if broken:
            raise CommandError(f"{broken} journal entries or rows fail.")
        self.stdout.write("Every journal entry holds and every journaled row is its fold.")

from django.core.management.base import BaseCommand

from operations.db_roles import (
    APP_PASSWORD_ENV,
    APP_ROLE,
    JOURNAL_ROLE,
    PRUNER_ROLE,
    setup_db_roles,
)


class Command(BaseCommand):
    help = (f"As the database owner (MIGRATION_DATABASE_URL): create or refresh the "
            f"application role {APP_ROLE} (password from {APP_PASSWORD_ENV}) and the prune "
            f"role {PRUNER_ROLE}, and their grants, and the journal's triggers (owned by "
            f"{JOURNAL_ROLE}). Idempotent: rerun after every migrate.")

    def handle(self, *args, **options):
        updatable = setup_db_roles()
        self.stdout.write(
            f"{APP_ROLE}: SELECT and INSERT on every table, UPDATE on {len(updatable)} "
            f"tables, no TRUNCATE; {PRUNER_ROLE}: owns the prune functions; {JOURNAL_ROLE}: "
            "writes the journal"
        )

import pgtrigger
from django.db import models

from coupons.models.append_only import PRUNER_ROLE, Refuse, append_only_triggers
from coupons.models.journal import Journaled

PRUNE_ACTOR = "system:prune"


class PruneRun(Journaled):
    """One `manage.py prune`: its cutoffs and what it removed.

    The prune function (`coupons_prune`, operations/db_roles.py) writes the row itself, its
    cutoffs on the database's clock, with its journal entry: no other role may insert one. A
    run without its entry was not written by prune (coupons/evidence/pruned.py). The ledger check
    (coupons/evidence/pruned.py) reads `outbox_before`: an operation older than a prune's
    outbox cutoff may have lost its (published) outbox row to retention, not to a bug.
    """

    ran_at = models.DateTimeField()
    outbox_before = models.DateTimeField()
    idempotency_before = models.DateTimeField()
    inbox_before = models.DateTimeField()
    outbox_deleted = models.PositiveIntegerField()
    idempotency_deleted = models.PositiveIntegerField()
    inbox_deleted = models.PositiveIntegerField()

    JOURNAL_COUPON = None  # about every coupon: folded by verify_journal, not per coupon

    class Meta:
        triggers = [
            *append_only_triggers(),
            Refuse(name="inserted_by_prune", operation=pgtrigger.Insert,
                   condition=pgtrigger.Condition(f"current_user <> '{PRUNER_ROLE}'")),
        ]

    def __str__(self):
        return f"prune at {self.ran_at:%Y-%m-%d %H:%M}"

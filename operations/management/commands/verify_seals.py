"""Every evidence row whose seal fails, and every forged record of unkeyed ledger rows.

Reads each sealed table once, in id order, by chunks (memory stays flat). Exit status 1 when
anything fails, so a scheduler or CI can alert on it. A deleted row is not found this way: a
per-row seal proves a row unchanged, not that none is missing (docs/evidence.md).
"""

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError

from coupons.evidence.ledger_chain import prefix_problem
from coupons.evidence.seals import seal_problem
from coupons.models import UnkeyedLedgerPrefix
from coupons.models.sealed import SealedModel


def sealed_models() -> list:
    """Every installed model that is sealed: a new evidence table (the console's staff notes
    and view log included, which this app may not import) is checked once it subclasses
    SealedModel."""
    return [model for model in apps.get_models() if issubclass(model, SealedModel)]


class Command(BaseCommand):
    help = "List every evidence row whose seal (HMAC under LEDGER_CHAIN_KEYS) fails."

    def handle(self, *args, **options):
        checked, broken = 0, 0
        for model in sealed_models():
            for row in model.objects.order_by("pk").iterator(chunk_size=2000):
                checked += 1
                if (problem := seal_problem(row)) is not None:
                    broken += 1
                    self.stdout.write(f"{model._meta.db_table} id={row.pk}: {problem}")
        for prefix in UnkeyedLedgerPrefix.objects.order_by("pk").iterator(chunk_size=2000):
            checked += 1
            if (problem := prefix_problem(prefix)) is not None:
                broken += 1
                self.stdout.write(f"{UnkeyedLedgerPrefix._meta.db_table} "
                                  f"coupon={prefix.coupon_id}: {problem}")
        if broken:
            raise CommandError(f"{broken} of {checked} sealed rows fail their seal.")
        self.stdout.write(f"{checked} sealed rows checked: every seal holds.")

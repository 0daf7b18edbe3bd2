"""The migrations hold every model change, the history triggers included.

A history table's triggers are declared in its model's Meta and reach the database only
through a migration (coupons/models/append_only.py): a rule weakened in the model and
committed without its migration would pass every other test, which run on the migrated
schema. `makemigrations --check` is what notices."""

from io import StringIO

import pgtrigger
import pytest
from django.core.management import call_command

from coupons.models import CouponOperation
from coupons.models.append_only import Refuse

# makemigrations checks the database's migration history before it compares the models.
pytestmark = pytest.mark.django_db


def makemigrations_check(*apps) -> tuple[int, str]:
    """`makemigrations --check --dry-run`: its exit status and what it would write."""
    out = StringIO()
    try:
        call_command("makemigrations", *apps, "--check", "--dry-run", stdout=out)
    except SystemExit as exit_:
        return exit_.code, out.getvalue()
    return 0, out.getvalue()


def test_every_model_change_has_its_migration():
    assert makemigrations_check() == (0, "No changes detected\n")


def test_a_history_trigger_weakened_without_its_migration_fails_the_check(monkeypatch):
    """The ledger's rule loses UPDATE (DELETE still refused) in the model only."""
    meta = CouponOperation._meta
    weakened = [Refuse(name="append_only", operation=pgtrigger.Delete)
                if trigger.name == "append_only" else trigger for trigger in meta.triggers]
    assert weakened != meta.triggers
    monkeypatch.setitem(meta.original_attrs, "triggers", weakened)
    monkeypatch.setattr(meta, "triggers", weakened)

    status, out = makemigrations_check("coupons")

    assert status == 1
    assert "Remove trigger append_only from model couponoperation" in out
    assert "Create trigger append_only on model couponoperation" in out

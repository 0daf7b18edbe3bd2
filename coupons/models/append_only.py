"""History the database protects, not only the ORM.

`AppendOnlyModel` refuses `save()` of an existing row and `delete()`: the friendly first
refusal. `QuerySet.update()`, `QuerySet.delete()` and raw SQL skip it, so on PostgreSQL every
history table also carries pgtrigger triggers (declared in its Meta, installed by migrations)
that refuse the write in the database, whoever sends it. SQLite, the demo database, has no
triggers: there only the ORM guard and the ledger's hash chain (coupons/ledger_chain.py) hold.

How to protect a new table (say, published return-policy versions):
1. Nothing may change a row: subclass `AppendOnlyModel` and put
   `triggers = append_only_triggers()` in its Meta.
   Some columns move once (a publish time, an outcome): use
   `triggers = [*delete_refused(), *frozen_except("published_at"), <one Protect for the allowed
   move>]`, like `OutboxEvent` (published_at: NULL → a time, once).
2. `manage.py makemigrations` writes `pgtrigger.migrations.AddTrigger` operations; keep them in
   your migration, after any data backfill of that table (the trigger refuses its UPDATEs).
   They are no-ops on SQLite.
3. Add the table to `PROTECTED` in tests/safety/test_history_protection.py: raw UPDATE and
   DELETE must fail on PostgreSQL.

Row-level triggers do not see TRUNCATE (pytest-django flushes with it) and a superuser can
switch triggers off; the ledger's hash chain catches what such an edit leaves behind.
"""

import pgtrigger
from django.db import models


def append_only_triggers() -> list:
    return [
        pgtrigger.Protect(name="append_only", operation=pgtrigger.Update | pgtrigger.Delete),
    ]


def delete_refused() -> list:
    return [pgtrigger.Protect(name="delete_refused", operation=pgtrigger.Delete)]


def frozen_except(*movable: str) -> list:
    """Every column but `movable` (column names) is frozen, columns added later included.

    The whole row compared as JSON, not a column list: a column another change adds is frozen
    too, and the trigger's SQL (so its migration) stays the same.
    """
    columns = "'{" + ",".join(movable) + "}'::text[]"
    return [
        pgtrigger.Protect(
            name="frozen_columns", operation=pgtrigger.Update,
            condition=pgtrigger.Condition(
                f"to_jsonb(OLD) - {columns} IS DISTINCT FROM to_jsonb(NEW) - {columns}"
            ),
        ),
    ]


class AppendOnlyModel(models.Model):
    """History rows: inserted once, never saved again or deleted through the ORM."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise TypeError(f"{type(self).__name__} rows are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} rows are append-only")

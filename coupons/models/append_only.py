"""History the database protects, not only the ORM.

`AppendOnlyModel` refuses `save()` of an existing row and `delete()`: the friendly first refusal.
`QuerySet.update()`, `QuerySet.delete()` and raw SQL skip it, so every history table
also carries triggers (declared in its Meta, installed by migrations) that refuse the write in the
database, whoever sends it. They are compiled with `UnswitchableTriggerSql`
(coupons/models/trigger_sql.py): unlike plain pgtrigger triggers no session setting
(`pgtrigger.ignore`) switches them off. Row triggers do not see TRUNCATE, so every history table
also refuses TRUNCATE with a statement trigger.

How to protect a new table (say, published return-policy versions):
1. Nothing may change a row: subclass `AppendOnlyModel` and put
   `triggers = append_only_triggers()` in its Meta.
   Some columns move once (a publish time, an outcome): use
   `triggers = [*delete_refused(), *frozen_except("published_at"), <one Refuse for the allowed
   move>]`, like `OutboxEvent` (published_at: NULL → a time, once). A row that is open until
   decided: `[*delete_refused(), *frozen_once_closed(open_statuses=[...])]`, and
   `*status_moves(opens=[...], moves={...})` so its status moves only one step forward.
   Use `Refuse`, never `pgtrigger.Protect`: the latter obeys `pgtrigger.ignore`.
2. `manage.py makemigrations` writes `pgtrigger.migrations.AddTrigger` operations; keep them in
   your migration, after any data backfill of that table (the trigger refuses its UPDATEs).
3. Add the table to `PROTECTED` in tests/coupons/safety/test_history_protection.py: raw UPDATE and
   DELETE must fail. `manage.py setup_db_roles` (operations/db_roles.py) gives
   the application role no UPDATE or DELETE on it unless listed there.

The one deleter past `delete_refused(pruned=True)` is `PRUNER_ROLE`, the NOLOGIN owner of the
prune functions (operations/db_roles.py). The table owner and a superuser can still switch
triggers off; the journal and its signed heads are what catch what such an edit leaves
behind (docs/evidence.md).
"""

import pgtrigger
from django.db import models
from pgtrigger import compiler

from coupons.models.trigger_sql import UnswitchableTriggerSql

# Owns the prune functions (SECURITY DEFINER); no one logs in as it. Named in trigger SQL.
PRUNER_ROLE = "coupon_pruner"


class Unswitchable:
    """Compiles a pgtrigger trigger with the template that has no `pgtrigger.ignore` branch."""

    def compile(self, model) -> compiler.Trigger:
        compiled = super().compile(model)
        return compiler.Trigger(
            name=compiled.name, sql=UnswitchableTriggerSql(**compiled.sql.kwargs)
        )


class Refuse(Unswitchable, pgtrigger.Protect):
    """pgtrigger.Protect that no session can switch off."""


class TruncateRefused(Unswitchable, pgtrigger.Trigger):
    when = pgtrigger.Before
    operation = pgtrigger.Truncate
    level = pgtrigger.Statement
    func = "RAISE EXCEPTION 'pgtrigger: Cannot truncate % table', TG_TABLE_NAME;"


class OnDatabaseClock(Unswitchable, pgtrigger.Trigger):
    """A time column the database stamps: when a row is inserted with it set, or it is first
    set (NULL → a value), it becomes the statement's time on the database's clock, whatever
    the writer sent. What ages a row toward deletion must not be the writer's to choose."""

    when = pgtrigger.Before
    operation = pgtrigger.Insert | pgtrigger.Update

    def __init__(self, *, column: str, **kwargs):
        self.func = (
            f"IF NEW.{column} IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.{column} IS NULL) THEN"
            f" NEW.{column} := statement_timestamp(); END IF; RETURN NEW;"
        )
        super().__init__(**kwargs)


def truncate_refused() -> list:
    return [TruncateRefused(name="truncate_refused")]


def append_only_triggers() -> list:
    return [
        Refuse(name="append_only", operation=pgtrigger.Update | pgtrigger.Delete),
        *truncate_refused(),
    ]


def delete_refused(*, pruned: bool = False) -> list:
    """No DELETE (nor TRUNCATE); `pruned`: except by the prune functions, past retention."""
    condition = pgtrigger.Condition(f"current_user <> '{PRUNER_ROLE}'") if pruned else None
    return [
        Refuse(name="delete_refused", operation=pgtrigger.Delete, condition=condition),
        *truncate_refused(),
    ]


def _other_columns_differ(movable) -> str:
    columns = "'{" + ",".join(movable) + "}'::text[]"
    return f"to_jsonb(OLD) - {columns} IS DISTINCT FROM to_jsonb(NEW) - {columns}"


def frozen_except(*movable: str) -> list:
    """Every column but `movable` (column names) is frozen, columns added later included.

    The whole row compared as JSON, not a column list: a column another change adds is frozen
    too, and the trigger's SQL (so its migration) stays the same.
    """
    return [
        Refuse(
            name="frozen_columns", operation=pgtrigger.Update,
            condition=pgtrigger.Condition(_other_columns_differ(movable)),
        ),
    ]


def frozen_once_closed(*, open_statuses: list[str], movable: tuple[str, ...] = ()) -> list:
    """A row moves while its `status` is open; once decided it is evidence and frozen, except
    `movable` columns that may be filled once (NULL → a value) afterwards."""
    statuses = ", ".join(f"'{status}'" for status in open_statuses)
    filled_once = "".join(
        f" OR (OLD.{column} IS NOT NULL AND OLD.{column} IS DISTINCT FROM NEW.{column})"
        for column in movable
    )
    return [
        Refuse(
            name="frozen_once_closed", operation=pgtrigger.Update,
            condition=pgtrigger.Condition(
                f"OLD.status NOT IN ({statuses}) AND "
                f"({_other_columns_differ(movable)}{filled_once})"
            ),
        ),
    ]


class StatusMoveRefused(Unswitchable, pgtrigger.Trigger):
    """Refuses a row whose `status` the condition says may not move so (or, on INSERT, may
    not open so), naming the table and the statuses."""

    when = pgtrigger.Before

    def __init__(self, *, what: str, detail: str, **kwargs):
        self.func = f"RAISE EXCEPTION 'coupons: % {what}', TG_TABLE_NAME USING DETAIL = {detail};"
        super().__init__(**kwargs)


def _quoted(statuses) -> str:
    return ", ".join(f"'{status}'" for status in sorted(statuses))


def status_moves(*, opens: list[str], moves: dict[str, list[str]]) -> list:
    """A row is inserted in one of `opens` and its `status` moves only along `moves` (a status
    → the statuses it may move to): never back, never past a step, never out of a status
    `moves` does not list (a final one). Staying put is no move: what may change then is for
    frozen_once_closed and frozen_while to say."""
    pairs = ", ".join(f"('{old}', '{new}')"
                      for old, news in sorted(moves.items()) for new in sorted(news))
    return [
        StatusMoveRefused(
            name="status_opens", operation=pgtrigger.Insert,
            what="rows open only in their first status",
            detail="format('status %s', NEW.status)",
            condition=pgtrigger.Condition(f"NEW.status NOT IN ({_quoted(opens)})"),
        ),
        StatusMoveRefused(
            name="status_moves", operation=pgtrigger.Update,
            what="status moves only one step forward",
            detail="format('status %s to %s', OLD.status, NEW.status)",
            condition=pgtrigger.Condition(
                f"OLD.status IS DISTINCT FROM NEW.status "
                f"AND (OLD.status, NEW.status) NOT IN ({pairs})"),
        ),
    ]


def frozen_while(status: str, *, movable: tuple[str, ...]) -> list:
    """While a row is in `status`, only `movable` columns move: what a step recorded (a
    recommendation waiting for its approval) is what the next step acts on."""
    return [
        Refuse(
            name="frozen_while_" + status.lower(), operation=pgtrigger.Update,
            condition=pgtrigger.Condition(
                f"OLD.status = '{status}' AND ({_other_columns_differ(movable)})"),
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

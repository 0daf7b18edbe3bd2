"""Writes of journaled rows: plain writes that declare who writes and which step it is.

The database writes every journaled row's entry itself (coupons/evidence/journal_sql.py),
from the row as stored and what the transaction declared: the actor (`coupons.actor`) and,
for an UPDATE, the step (`coupons.step.<table>`; an INSERT opens with the model's first
opening unless `coupons.opening.<table>` names another). Each function here declares them
with set_config (transaction-local) inside the statement that writes, so declaring costs no
statement; the AFTER ROW trigger reads them once the statement's rows are in.
"""

from django.db import connection, transaction
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from coupons.sql import journaled
from coupons.sql.journaled import declaring


def declared(model=None, *, actor: str, step: str | None = None, opening: str | None = None):
    """declaring() as a filter the ORM ANDs into an UPDATE's WHERE."""
    text, params = declaring(model, actor=actor, step=step, opening=opening)
    return RawSQL(text, params, output_field=BooleanField())


def declare(model=None, *, actor: str, opening: str | None = None) -> None:
    """Declare in a statement of its own, for a write the ORM sends (a batch's bulk_create)."""
    text, params = declaring(model, actor=actor, opening=opening)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {text}", params)


def declared_insert(row, *, actor: str, kind: str | None = None, ignore_conflicts=False):
    """INSERT `row` (unsaved) as `actor`, opening its journal with `kind` (the model's first
    opening by default); the row. With `ignore_conflicts`, a row a unique constraint refuses is
    not written (nor journaled) and the answer is None."""
    model = type(row)
    text, fields = journaled.insert(model, with_pk=row.pk is not None,
                                    with_opening=kind is not None,
                                    ignore_conflicts=ignore_conflicts)
    _, params = declaring(model, actor=actor, opening=kind)
    with connection.cursor() as cursor:
        cursor.execute(text, [*journaled.row_params(fields, row), *params])
        found = cursor.fetchone()
    if found is None:
        return None
    row.pk = found[0]
    row._state.adding = False
    row._state.db = connection.alias
    return row


def declared_update(row, *, where: dict, changes: dict, step: str, actor: str) -> bool:
    """Compare-and-set `row` (its pk and `where`) to `changes` as a `step` by `actor`, in one
    statement; False when no row matched (nothing written). `row` takes the changes."""
    moved = declared_moves(type(row).objects.filter(pk=row.pk, **where), changes, step=step,
                           actor=actor)
    if moved:
        for name, value in changes.items():
            setattr(row, name, value)
    return bool(moved)


def declared_moves(queryset, changes: dict, *, step: str, actor: str) -> int:
    """UPDATE the queryset's rows to `changes` as a `step` by `actor`; how many moved."""
    return queryset.filter(declared(queryset.model, actor=actor, step=step)).update(**changes)


def declared_bulk_create(rows: list, *, actor: str) -> list:
    """bulk_create `rows` of one model, all written by `actor` (a scanner's batch). The
    declaration is transaction-local, so both statements share one transaction even when the
    caller runs in autocommit."""
    if rows:
        with transaction.atomic():
            declare(actor=actor)
            type(rows[0]).objects.bulk_create(rows)
    return rows

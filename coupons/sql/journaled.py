"""Writes of journaled rows that declare, in the same statement, who writes and which step.

Why not the ORM alone: the database writes each journaled row's entry itself
(coupons/evidence/journal_sql.py), reading the actor, and for an UPDATE the step or for an
INSERT the opening, from transaction settings the writing statement declares with set_config.
An ORM UPDATE carries the declaration as a filter (`declaring` in a RawSQL, the ORM's public
escape hatch); an ORM INSERT cannot carry one, and declaring in a statement of its own would
cost every evidence write a round trip. So an evidence row's INSERT is the one statement here
built from a model rather than written out: one per journaled model (a dozen tables, whose
columns migrations add), each column's parameter prepared by the field's public
`get_db_prep_save`, as Model.save prepares it.
"""

from functools import cache

from django.db import connection

from coupons.evidence.journal_sql import ACTOR_SETTING, opening_setting, step_setting

DECLARE = "set_config('{name}', %s, true)"
"""One transaction-local setting the journal trigger reads; parameter: its value."""

INSERT = ("INSERT INTO {table} ({columns}) SELECT {values} WHERE {declared} "
          "{on_conflict}RETURNING {pk}")
"""One row of a journaled table, written only if its declaration holds (it always does: it is
a true condition with a side effect). Parameters: the row's, then the declaration's."""

ON_CONFLICT = "ON CONFLICT DO NOTHING "


def declaring(model=None, *, actor: str, step: str | None = None,
              opening: str | None = None) -> tuple[str, list]:
    """A true SQL condition that declares `actor` (and `model`'s step or opening), with its
    parameters: for a statement to AND into its WHERE or select FROM."""
    settings = [(ACTOR_SETTING, actor)]
    if step is not None:
        settings.append((step_setting(model), step))
    if opening is not None:
        settings.append((opening_setting(model), opening))
    text = " || ".join(DECLARE.format(name=name) for name, _ in settings)
    return f"({text}) IS NOT NULL", [value for _, value in settings]


@cache
def insert(model, *, with_pk: bool, with_opening: bool, ignore_conflicts: bool) -> tuple:
    """(the INSERT of one `model` row, the fields its parameters come from, in order)."""
    fields = tuple(field for field in model._meta.concrete_fields
                   if with_pk or not field.primary_key)
    declared, _ = declaring(model, actor="", opening="" if with_opening else None)
    qn = connection.ops.quote_name
    text = INSERT.format(
        table=qn(model._meta.db_table), columns=", ".join(qn(f.column) for f in fields),
        values=", ".join("%s" for _ in fields), declared=declared,
        on_conflict=ON_CONFLICT if ignore_conflicts else "", pk=qn(model._meta.pk.column))
    return text, fields


def row_params(fields, row) -> list:
    """`row`'s values for `fields`, as Model.save prepares them."""
    return [field.get_db_prep_save(field.pre_save(row, True), connection) for field in fields]

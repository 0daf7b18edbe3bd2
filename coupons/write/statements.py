"""The commands' SQL, built once per process and shape, then only bound (docs/performance.md).

A command's statements take a handful of shapes: which model, which columns, which WHERE.
Each shape's text is built here from the model's own fields the first time it is needed and
kept with the fields its parameters come from, in their order; a command then only turns
its values into parameters. Nothing is compiled by the ORM on the way, and the same text
each time lets psycopg prepare it once per connection (settings: DB_PREPARE_THRESHOLD). A
column added to or dropped from a model changes the shapes built at the next start.

tests/coupons/write/test_statements.py holds each shape to the SQL the ORM would write.
"""

from dataclasses import dataclass
from datetime import datetime
from functools import cache, cached_property
from uuid import UUID

from django.db import DEFAULT_DB_ALIAS, connection, connections, models

# Field classes (exactly these, not subclasses) whose get_db_prep_save leaves a value of these
# types as it is (None included), or only wraps an integer in the psycopg type of its column:
# a bind does that itself and skips the ORM's calls. Any other value or field, a JSON or
# decimal one say, is prepared by the ORM; tests/coupons/write/test_statements.py holds every
# command row's bind to the ORM's.
AS_IS = {
    **dict.fromkeys((models.CharField, models.TextField), (str, type(None))),
    **dict.fromkeys((models.AutoField, models.BigAutoField, models.IntegerField,
                     models.BigIntegerField, models.SmallIntegerField,
                     models.PositiveIntegerField, models.PositiveSmallIntegerField),
                    (int, type(None))),
    models.BooleanField: (bool, type(None)),
    models.UUIDField: (UUID, type(None)),
    models.DateTimeField: (datetime, type(None)),  # aware only: a naive one is made aware
}


def plan(field, db) -> tuple:
    """(field, the value types it binds as they are, the wrapper of an integer or None).

    No types when its pre_save is more than a read (a DateTimeField's auto_now) or it is not
    one of AS_IS; a foreign key's are its target's. An auto field's integer is not wrapped.
    """
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return field, (), None
    target = field.target_field if type(field) in (models.ForeignKey,
                                                   models.OneToOneField) else field
    integers = getattr(db.ops, "integerfield_type_map", {})
    return field, AS_IS.get(type(target), ()), integers.get(target.get_internal_type())


def prepared(planned, value, db):
    """`field.get_db_prep_save(value)` for `planned` (field, types, wrapper) from plan()."""
    field, plain, wrap = planned
    if type(value) not in plain or (type(value) is datetime and value.tzinfo is None):
        return field.get_db_prep_save(value, db)
    return value if wrap is None or value is None else wrap(value)


@dataclass(frozen=True)
class Statement:
    """A statement's text and what fills its parameters, in order: a field of the row (its
    value prepared as the ORM saves it) or a constant."""

    sql: str
    fields: tuple

    def bind(self, row) -> list:
        db = the_connection()
        return [prepared(planned, getattr(row, planned[0].attname), db) if planned[1]
                else planned[0].get_db_prep_save(planned[0].pre_save(row, True), db)
                for planned in self.plan]

    @cached_property
    def plan(self) -> tuple:
        return tuple(plan(field, the_connection()) for field in self.fields)


@cache
def insert(model, *, with_pk: bool, source: str, payload: str = "",
           columns: tuple = ()) -> Statement:
    """INSERT of one `model` row selecting FROM `source`, returning its id as `id`.

    `with_pk`: the row brings its own primary key (a UUID) rather than the sequence's.
    `columns` are (attname, SQL expression over `source`) pairs written instead of the row's
    values; `payload` names one of them that is also merged into the row's JSON payload
    under the same key (the outbox payload's operation id).
    """
    qn = connection.ops.quote_name
    meta, expressions = model._meta, dict(columns)
    names, values, fields = [], [], []
    for field in meta.concrete_fields:
        if field.primary_key and not with_pk:
            continue
        names.append(qn(field.column))
        if field.attname in expressions:
            values.append(expressions[field.attname])
            continue
        values.append("%s")
        fields.append(field)
        if payload and field.name == "payload":
            values[-1] = (f"CAST(%s AS jsonb) || "
                          f"jsonb_build_object('{payload}', {expressions[payload]})")
    sql = (f"INSERT INTO {qn(meta.db_table)} ({', '.join(names)}) "  # noqa: S608
           f"SELECT {', '.join(values)} FROM {source} RETURNING {qn(meta.pk.column)} AS id")
    return Statement(sql, tuple(fields))


@dataclass(frozen=True)
class Update:
    """An UPDATE's text, the fields its SET parameters prepare and those its WHERE compares."""

    sql: str
    set_fields: tuple
    where_fields: tuple

    def bind(self, changes: dict, where: dict) -> list:
        """`changes` and `where` in the order the statement was built with (values of a
        foreign key may be the related instance, as the ORM takes them)."""
        params, db = [], the_connection()
        for planned, value in zip(self.set_plan, changes.values(), strict=True):
            field = planned[0]
            if value is not None and field.remote_field is not None and hasattr(value, "_meta"):
                value = value.prepare_database_save(field)
            params.append(prepared(planned, value, db))
        compared = [value for value in where.values() if value is not None]  # None: IS NULL
        for (field, plain, wrap), value in zip(self.where_plan, compared, strict=True):
            if type(value) in plain and type(value) is not datetime:
                params.append(value if wrap is None else wrap(value))
            else:
                params.append(field.get_db_prep_value(field.get_prep_value(value), db,
                                                      prepared=True))
        return params

    @cached_property
    def set_plan(self) -> tuple:
        return tuple(plan(field, the_connection()) for field in self.set_fields)

    @cached_property
    def where_plan(self) -> tuple:
        return tuple(plan(field, the_connection()) for field in self.where_fields)


def the_connection():
    """The default connection itself: `connection` is a proxy that looks it up again (a
    context-local read) at each of the dozens of attribute reads a bind makes."""
    return connections[DEFAULT_DB_ALIAS]


def update_of(model, changes: dict, where: dict, *, extra_where: str = "") -> tuple[str, list]:
    """`model.objects.filter(**where).update(**changes)` as SQL and parameters, the text
    built once per shape; `extra_where` is SQL ANDed to it."""
    shape = update(model, tuple(changes), tuple((name, value is None)
                                                for name, value in where.items()), extra_where)
    return shape.sql, shape.bind(changes, where)


@cache
def update(model, set_names: tuple, where_shape: tuple, extra_where: str = "") -> Update:
    """`where_shape` holds (name, is None) pairs: a None compares IS NULL, as the ORM does."""
    qn = connection.ops.quote_name
    meta = model._meta
    table = qn(meta.db_table)
    set_fields = tuple(meta.get_field(name) for name in set_names)
    where_fields, conditions = [], []
    for name, is_null in where_shape:
        field = meta.pk if name == "pk" else meta.get_field(name)
        column = f"{table}.{qn(field.column)}"
        if is_null:
            conditions.append(f"{column} IS NULL")
        else:
            conditions.append(f"{column} = %s")
            where_fields.append(field)
    if extra_where:
        conditions.append(f"({extra_where})")
    sets = ", ".join(f"{qn(field.column)} = %s" for field in set_fields)
    sql = f"UPDATE {table} SET {sets} WHERE ({' AND '.join(conditions)})"  # noqa: S608
    return Update(sql, set_fields, tuple(where_fields))

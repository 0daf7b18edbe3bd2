"""A transition's writes as one PostgreSQL statement (coupons.write.transitions uses it).

One data-modifying WITH: the compare-and-set UPDATE (its WHERE carries state, version and
ownership), then every row the command declared, the ledger row, its outbox row and the stored
answer. The database writes each evidence row's journal entry (coupons/evidence/journal_sql.py)
as the actor the statement declares first (`declared`, which the compare-and-set reads, so it
is set before any row is written). Each insert
selects FROM the compare-and-set's RETURNING and each update asks EXISTS of it, so a
compare-and-set that matched no row writes nothing at all. Row triggers and foreign keys act on
each row as for separate statements (the keys are checked at the end of the statement, when
every row is in).

Ids are not known before the INSERT: the outbox payload and the answer take them from the
inserts' RETURNING, and the statement returns them for the caller's objects.

The text is the same for every command of one shape (which rows, which columns, which
answer): it is joined once per process and shape (`_text`) from coupons.write.statements,
and a command only binds its values. It runs on the backend's numbered_cursor, which numbers
its placeholders once rather than at each execute (psycopg does that only for short texts).
"""

from functools import cache

from django.db import connection

from coupons import clock
from coupons.models import IdempotencyRecord, OutboxEvent, UserCoupon
from coupons.write import statements
from coupons.write.declared import declaring

CAS_HIT = "EXISTS (SELECT 1 FROM cas)"
# The statement's first CTE declares its actor; the compare-and-set reads it.
DECLARED = f"declared AS (SELECT {declaring(actor='')[0]} AS done)"
DECLARED_READ = "(SELECT done FROM declared)"
# The outbox row takes the ledger row's id, in its column and in its payload.
OUTBOX_COLUMNS = (("operation_id", "ledger.id"),)


def write(*, cas, rows, updates, operation, event, answer) -> list | None:
    """Run the writes; the new ids (ledger, outbox, then `rows`) or None if the CAS missed.

    `cas` is (where, changes) on the coupon, as UserCoupon.objects.filter(**where)
    .update(**changes) takes them; each of `updates` is (model, pk, changes), a row updated
    only if the CAS hit; `answer` is None or (record id, status, body, {body key: row of
    `rows` whose id it takes}, the record's seal: coupons.write.idempotency_seal).
    """
    where, changes = cas
    answer_rows = () if answer is None else tuple(
        (key, next(i for i, row in enumerate(rows) if row is taken))
        for key, taken in answer[3].items())
    shape = (
        tuple(changes), tuple((name, value is None) for name, value in where.items()),
        tuple((type(row), row.pk is not None) for row in rows),
        tuple((model, tuple(fields)) for model, _, fields in updates),
        type(operation), answer is not None, answer_rows,
    )
    sql, cas_statement = _text(shape)
    db = statements.the_connection()
    params = [operation.actor, *cas_statement.bind(changes, where)]
    for row in rows:
        params += _row_insert(type(row), row.pk is not None, "cas").bind(row)
    for model, pk, fields in updates:
        params += statements.update(model, tuple(fields), (("pk", False),), CAS_HIT).bind(
            fields, {"pk": pk})
    params += _row_insert(type(operation), False, "cas").bind(operation)
    params += _outbox().bind(event)
    if answer is not None:
        record_id, status, body, _, seal = answer
        Status = IdempotencyRecord.Status
        body_field = IdempotencyRecord._meta.get_field("response_body")
        params += [Status.COMPLETED, status, body_field.get_db_prep_save(body, db),
                   clock.now(), seal, record_id, Status.IN_PROGRESS]
    with db.numbered_cursor() as cursor:
        cursor.execute(sql, params)
        ids = list(cursor.fetchone())
    return None if ids[0] is None else ids


def _row_insert(model, with_pk, source) -> statements.Statement:
    return statements.insert(model, with_pk=with_pk, source=source)


def _outbox() -> statements.Statement:
    return statements.insert(OutboxEvent, with_pk=False, source="ledger", payload="operation_id",
                             columns=OUTBOX_COLUMNS)


@cache
def _text(shape) -> tuple[str, statements.Update]:
    """The statement of one shape (see write), and the compare-and-set it starts with."""
    set_names, where_shape, row_shapes, update_shapes, ledger_model, answered, answer_rows = shape
    cas = statements.update(UserCoupon, set_names, where_shape, DECLARED_READ)
    parts = [DECLARED, f"cas AS ({cas.sql} RETURNING 1)"]

    def with_insert(name, model, with_pk, source):
        parts.append(f"{name} AS ({_row_insert(model, with_pk, source).sql})")

    names = []
    for i, (model, with_pk) in enumerate(row_shapes):
        names.append(f"row{i}")
        with_insert(f"row{i}", model, with_pk, "cas")
    for i, (model, fields) in enumerate(update_shapes):
        touch = statements.update(model, fields, (("pk", False),), CAS_HIT)
        parts.append(f"touch{i} AS ({touch.sql})")
    with_insert("ledger", ledger_model, False, "cas")
    parts.append(f"outbox AS ({_outbox().sql})")
    if answered:
        parts.append(f"answer AS ({_answer_sql(answer_rows, names)})")
    returned = ", ".join(f"(SELECT id FROM {name})" for name in ("ledger", "outbox", *names))
    return f"WITH {', '.join(parts)} SELECT {returned}", cas


def _answer_sql(answer_rows, names) -> str:
    """The stored answer, completed as coupons.write.idempotency.idempotency_complete does;
    each of `answer_rows` (body key, index in `names`) takes that row's new id."""
    body_sql = "CAST(%s AS jsonb)"
    for key, index in answer_rows:
        assert key.isidentifier()  # written into the text: the services' own names only
        body_sql += f" || jsonb_build_object('{key}', (SELECT id FROM {names[index]}))"
    table = connection.ops.quote_name(IdempotencyRecord._meta.db_table)
    return (f"UPDATE {table} SET status = %s, response_status = %s, "  # noqa: S608
            f"response_body = {body_sql}, completed_at = %s, seal = %s "
            f"WHERE id = %s AND status = %s AND {CAS_HIT}")

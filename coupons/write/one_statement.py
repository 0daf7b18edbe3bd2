"""A transition's writes as one PostgreSQL statement (coupons.write.transitions uses it).

One data-modifying WITH: the compare-and-set UPDATE (the ORM's own SQL for the same filter,
coupons.write.orm_sql, so its WHERE carries state, version and ownership exactly as the
queryset says), then every row the
command declared, the ledger row, its outbox row and the stored answer; with each evidence row
(coupons.models.Journaled) its journal entry. Each insert selects
FROM the compare-and-set's RETURNING and each update asks EXISTS of it, so a compare-and-set
that matched no row writes nothing at all. Row triggers and foreign keys act on each row as for
separate statements (the keys are checked at the end of the statement, when every row is in).

Ids are not known before the INSERT: the outbox payload and the answer take them from the
inserts' RETURNING, and the statement returns them for the caller's objects.
"""

from django.db import connection

from coupons import clock
from coupons.evidence.journal import entry_of_insert_sql
from coupons.models import IdempotencyRecord, Journaled
from coupons.write.orm_sql import update_sql

CAS_HIT = "EXISTS (SELECT 1 FROM cas)"


def write(*, cas, rows, updates, operation, event, answer) -> list | None:
    """Run the writes; the new ids (ledger, outbox, then `rows`) or None if the CAS missed.

    `cas` and each of `updates` are (queryset, values); `answer` is None or
    (record id, status, body, {body key: row of `rows` whose id it takes}).
    """
    parts, params = [], []

    def with_item(name, sql, item_params):
        parts.append(f"{name} AS ({sql})")
        params.extend(item_params)

    sql, item_params = update_sql(*cas)
    with_item("cas", f"{sql} RETURNING 1", item_params)
    def with_journaled(name, row, source):
        with_item(name, *_insert(row, source))
        if isinstance(row, Journaled):
            with_item(f"{name}_entry", *entry_of_insert_sql(
                name, row, actor=operation.actor, at=operation.created_at))

    names = {}
    for i, row in enumerate(rows):
        names[id(row)] = f"row{i}"
        with_journaled(f"row{i}", row, "cas")
    for i, (queryset, changes) in enumerate(updates):
        with_item(f"touch{i}", *update_sql(queryset.extra(where=[CAS_HIT]), changes))
    with_journaled("ledger", operation, "cas")
    with_item("outbox", *_insert(event, "ledger", payload="operation_id",
                                 operation_id="ledger.id"))
    if answer is not None:
        with_item("answer", *_answer(*answer, names))
    returned = ", ".join(f"(SELECT id FROM {name})"
                         for name in ("ledger", "outbox", *names.values()))
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {', '.join(parts)} SELECT {returned}", params)
        ids = list(cursor.fetchone())
    return None if ids[0] is None else ids


def _insert(row, source, payload=None, **columns) -> tuple[str, list]:
    """INSERT of `row` selecting FROM `source`. `columns` are SQL expressions over the source
    instead of the row's values; `payload` names one of them to merge into the row's JSON
    payload, under the same key."""
    qn = connection.ops.quote_name
    meta = row._meta
    names, values, params = [], [], []
    for field in meta.concrete_fields:
        if field.primary_key and getattr(row, field.attname) is None:
            continue
        names.append(qn(field.column))
        if field.attname in columns:
            values.append(columns[field.attname])
        elif payload and field.name == "payload":
            values.append("CAST(%s AS jsonb) || "
                          f"jsonb_build_object(CAST(%s AS text), {columns[payload]})")
            params.extend([field.get_db_prep_save(field.pre_save(row, True), connection),
                           payload])
        else:
            values.append("%s")
            params.append(field.get_db_prep_save(field.pre_save(row, True), connection))
    sql = (f"INSERT INTO {qn(meta.db_table)} ({', '.join(names)}) "
           f"SELECT {', '.join(values)} FROM {source} RETURNING {qn(meta.pk.column)} AS id")
    return sql, params


def _answer(record_id, status, body, ids, names) -> tuple[str, list]:
    """The stored answer, completed as coupons.write.idempotency.idempotency_complete does."""
    field = IdempotencyRecord._meta.get_field("response_body")
    body_sql, params = "CAST(%s AS jsonb)", [field.get_db_prep_save(body, connection)]
    for key, row in ids.items():
        body_sql += f" || jsonb_build_object(CAST(%s AS text), (SELECT id FROM {names[id(row)]}))"
        params.append(key)
    table = connection.ops.quote_name(IdempotencyRecord._meta.db_table)
    sql = (f"UPDATE {table} SET status = %s, response_status = %s, "  # noqa: S608
           f"response_body = {body_sql}, completed_at = %s "
           f"WHERE id = %s AND status = %s AND {CAS_HIT}")
    Status = IdempotencyRecord.Status
    return sql, [Status.COMPLETED, status, *params, clock.now(), record_id, Status.IN_PROGRESS]

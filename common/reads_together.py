"""Several querysets read in one statement: one round trip for a page's many small reads.

A page that shows a coupon reads a dozen small sets of rows of different tables (a page of the
timeline from each source, a page of the ledger, what waits for a person...). Each is a
queryset as its selector writes it; `read_at_once` sends them as one UNION ALL of wide rows
(each part's columns in its own slots, typed NULLs in the others'), then turns each part's
slice back into model instances the way the queryset itself would (its converters, its
select_related), in its own order. Parts that go to different databases (a replica) are read
in one statement per database.

A `Read` is what a selector hands the caller instead of rows: its querysets and what to make
of their rows, so the caller can read several selectors' rows at once and each selector still
says what its answer is.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import QuerySet
from django.db.models.query import get_related_populators


@dataclass(frozen=True)
class Read:
    """A selector's rows, not yet read: `finish` gets one list of instances per queryset."""

    querysets: Sequence[QuerySet]
    finish: Callable[[list[list]], Any]

    def then(self, step: Callable[[Any], Any]) -> "Read":
        """The same rows, with `step` applied to what `finish` makes of them."""
        return Read(self.querysets, lambda found: step(self.finish(found)))


def read_at_once(**reads: Read) -> dict[str, Any]:
    """{name: read.finish(its rows)} for every read, all of them in one statement a database."""
    querysets = [qs for read in reads.values() for qs in read.querysets]
    rows = iter(_rows_of(querysets))
    return {name: read.finish([next(rows) for _ in read.querysets])
            for name, read in reads.items()}


def read_once(read: Read) -> Any:
    return read_at_once(one=read)["one"]


def _rows_of(querysets: Sequence[QuerySet]) -> list[list]:
    by_db: dict[str, list[int]] = {}
    for n, qs in enumerate(querysets):
        by_db.setdefault(qs.db, []).append(n)
    found: list[list] = [[] for _ in querysets]
    for db, numbers in by_db.items():
        for n, instances in zip(numbers, _one_statement(db, [querysets[n] for n in numbers]),
                                strict=True):
            found[n] = instances
    return found


def _one_statement(db: str, querysets: Sequence[QuerySet]) -> list[list]:
    connection = connections[db]
    compiled = []
    for qs in querysets:
        compiler = qs.query.get_compiler(using=db)
        try:
            sql, params = compiler.as_sql()
        except EmptyResultSet:  # a filter no row can pass (pk__in=[]): nothing to send
            sql, params = "", ()
        compiled.append((compiler, sql, params))
    compiled_parts = [(c, sql, params) for c, sql, params in compiled if sql]
    types = [expr.output_field.cast_db_type(connection) for compiler, _, _ in compiled_parts
             for expr, _, _ in compiler.select[:compiler.col_count]]
    parts, params, offset = [], [], 0
    for part, (compiler, sql, part_params) in enumerate(compiled_parts):
        width = compiler.col_count
        names = [f"c{offset + k}" for k in range(width)]
        columns = [f"CAST(NULL AS {kind})" for kind in types[:offset]] + [
            f"t.{name}" for name in names] + [
            f"CAST(NULL AS {kind})" for kind in types[offset + width:]]
        parts.append(f"(SELECT {part} AS part, row_number() OVER () AS pos, "
                     f"{', '.join(columns)} FROM ({sql}) AS t({', '.join(names)}))")
        params.extend(part_params)
        offset += width
    found: list[list] = [[] for _ in compiled_parts]
    if parts:
        with connection.cursor() as cursor:
            cursor.execute(f"{' UNION ALL '.join(parts)} ORDER BY part, pos", params)
            for row in cursor.fetchall():
                found[row[0]].append(row[2:])
    instances, offset, rows = [], 0, iter(found)
    for compiler, sql, _ in compiled:
        if not sql:
            instances.append([])
            continue
        width = compiler.col_count
        instances.append(_instances(compiler, db, [row[offset:offset + width]
                                                   for row in next(rows)]))
        offset += width
    return instances


def _instances(compiler, db: str, rows: list[tuple]) -> list:
    """Model instances from a part's rows, as Django's ModelIterable makes them."""
    select, klass_info = compiler.select, compiler.klass_info
    model = klass_info["model"]
    fields = klass_info["select_fields"]
    start, end = fields[0], fields[-1] + 1
    init_list = [column[0].target.attname for column in select[start:end]]
    populators = get_related_populators(klass_info, select, db)
    made = []
    for row in compiler.results_iter([rows]):
        instance = model.from_db(db, init_list, row[start:end])
        for populator in populators:
            populator.populate(row, instance)
        made.append(instance)
    return made

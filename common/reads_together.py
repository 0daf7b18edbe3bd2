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
says what its answer is. A read whose querysets are parts of one merged order (a timeline's
sources, each cut to a page on its own index) can ask for only the `First` rows of them all in
that order: the database merges and cuts, and only the rows a page shows cross the wire and
become instances.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import QuerySet
from django.db.models.query import get_related_populators


@dataclass(frozen=True)
class First:
    """Of a read's querysets together, only the first `rows` rows in the order of the
    annotations `by`, which every one of them carries under these names (`descending`: the
    last rows, last first). Each queryset must itself be ordered that way, so what is kept of
    it is a prefix of its own order."""

    by: tuple[str, ...]
    rows: int
    descending: bool = False


@dataclass(frozen=True)
class Read:
    """A selector's rows, not yet read: `finish` gets one list of instances per queryset."""

    querysets: Sequence[QuerySet]
    finish: Callable[[list[list]], Any]
    first: First | None = None

    def then(self, step: Callable[[Any], Any]) -> "Read":
        """The same rows, with `step` applied to what `finish` makes of them."""
        return Read(self.querysets, lambda found: step(self.finish(found)), self.first)


def read_at_once(**reads: Read) -> dict[str, Any]:
    """{name: read.finish(its rows)} for every read, all of them in one statement a database."""
    querysets = [qs for read in reads.values() for qs in read.querysets]
    cuts = [read.first for read in reads.values() for _ in read.querysets]
    rows = iter(_rows_of(querysets, cuts))
    return {name: read.finish([next(rows) for _ in read.querysets])
            for name, read in reads.items()}


def _rows_of(querysets: Sequence[QuerySet], cuts: Sequence[First | None]) -> list[list]:
    by_db: dict[str, list[int]] = {}
    for n, qs in enumerate(querysets):
        by_db.setdefault(qs.db, []).append(n)
    found: list[list] = [[] for _ in querysets]
    for db, numbers in by_db.items():
        read = _one_statement(db, [querysets[n] for n in numbers], [cuts[n] for n in numbers])
        for n, instances in zip(numbers, read, strict=True):
            found[n] = instances
    return found


def _one_statement(db: str, querysets: Sequence[QuerySet],
                   cuts: Sequence[First | None]) -> list[list]:
    connection = connections[db]
    compiled = []
    for qs, cut in zip(querysets, cuts, strict=True):
        compiler = qs.query.get_compiler(using=db)
        try:
            sql, params = compiler.as_sql()
        except EmptyResultSet:  # a filter no row can pass (pk__in=[]): nothing to send
            sql, params = "", ()
        compiled.append((compiler, sql, params, cut))
    compiled_parts = [part for part in compiled if part[1]]
    first = _the_first(compiled_parts)
    types = [expr.output_field.cast_db_type(connection) for compiler, *_ in compiled_parts
             for expr, _, _ in compiler.select[:compiler.col_count]]
    # The cut's order: a key column per annotation, NULL in the rows of the other parts.
    key_types = [] if first is None else _key_types(compiled_parts, first, connection)
    parts, cut_parts, params, cut_params, offset = [], [], [], [], 0
    for part, (compiler, sql, part_params, part_cut) in enumerate(compiled_parts):
        width = compiler.col_count
        names = [f"c{offset + k}" for k in range(width)]
        keys = ([f"t.c{offset + compiler.annotation_col_map[name]}" for name in part_cut.by]
                if part_cut is not None else [f"CAST(NULL AS {kind})" for kind in key_types])
        columns = [f"CAST(NULL AS {kind})" for kind in types[:offset]] + [
            f"t.{name}" for name in names] + [
            f"CAST(NULL AS {kind})" for kind in types[offset + width:]]
        (cut_parts if part_cut is not None else parts).append(
            f"(SELECT {part} AS part, row_number() OVER () AS pos, "
            f"{', '.join([*keys, *columns])} FROM ({sql}) AS t({', '.join(names)}))")
        (cut_params if part_cut is not None else params).extend(part_params)
        offset += width
    if cut_parts:
        direction = " DESC" if first.descending else ""
        order = ", ".join(f"k{n}{direction}" for n in range(len(key_types)))
        named = ", ".join(["part", "pos", *(f"k{n}" for n in range(len(key_types))),
                           *(f"c{n}" for n in range(len(types)))])
        parts.append(f"(SELECT * FROM ({' UNION ALL '.join(cut_parts)}) AS merged({named}) "
                     f"ORDER BY {order} LIMIT {int(first.rows)})")
        params.extend(cut_params)
    found: list[list] = [[] for _ in compiled_parts]
    if parts:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT * FROM ({' UNION ALL '.join(parts)}) AS together "
                           "ORDER BY part, pos", params)
            for row in cursor.fetchall():
                found[row[0]].append(row[2 + len(key_types):])
    instances, offset, rows = [], 0, iter(found)
    for compiler, sql, _, _ in compiled:
        if not sql:
            instances.append([])
            continue
        width = compiler.col_count
        instances.append(_instances(compiler, db, [row[offset:offset + width]
                                                   for row in next(rows)]))
        offset += width
    return instances


def _the_first(compiled_parts) -> First | None:
    """The statement's one merged order, if a part asks for one: its key columns are shared by
    every part."""
    cuts = {id(cut): cut for *_, cut in compiled_parts if cut is not None}
    if len(cuts) > 1:
        raise ValueError("read_at_once cuts one merged order a statement")
    return next(iter(cuts.values()), None)


def _key_types(compiled_parts, first: First, connection) -> list[str]:
    """The SQL types of the merged order's key columns, as the first part cut by it has them."""
    compiler = next(compiler for compiler, *_, cut in compiled_parts if cut is first)
    return [compiler.select[compiler.annotation_col_map[name]][0].output_field
            .cast_db_type(connection) for name in first.by]


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

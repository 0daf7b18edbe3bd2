"""The journal: every write of a decision, compensation or case is an entry anyone can verify.

A journaled row (coupons.models.Journaled) is written only together with its entry, in one
PostgreSQL statement (a data-modifying WITH), so no command spends a round trip on it. An
entry's content is canonical JSON:

    {"id":<row id>,"actor":...,"at":...,"kind":...,"parent":<hash or null>,"row":{...},"table":...}

`id` first (the database gives it, the statement writes it in), then the other keys and every
nested object's keys sorted, no whitespace, UTF-8. Its SHA-256 (`content_hash`) is public: no
key is needed to recompute it. `parent` is the hash of the row's previous entry, null for the
first; `row` holds every column for the first entry and the moved columns after that.

Folding a row's entries in order gives what the services wrote; `fold_problem` compares that
with the row and names the first column that differs. A decision is taken only on a row that
equals its fold (`require_folds`), so an UPDATE past the services (an amount, a proposer, an
action) is refused at the approval instead of being approved as it stands.

What the journal cannot tell: an entry appended by someone with the application's login,
who can INSERT as the application does. It can only extend a row's chain at its tip (the
unique constraints), with the moves that row allows (`JOURNAL_MOVES`), and its actor and time
stay on record.
"""

import hashlib
import json
import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache

from django.apps import apps
from django.db import connection
from django.db.models import Exists, OuterRef
from django.db.models.expressions import RawSQL
from django.db.models.sql import UpdateQuery
from django.utils import timezone
from django.utils.translation import gettext

from coupons.errors import EvidenceMismatch
from coupons.models import Journaled, JournalEntry
from coupons.models.journal import PRUNED

TABLE = JournalEntry._meta.db_table


def canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_text(subject_id: int, body: dict) -> str:
    """The canonical content of an entry about row `subject_id` (the form the SQL writes)."""
    return f'{{"id":{subject_id},' + canonical(body)[1:]


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def _value(field, value):
    if value is None:
        return None
    if isinstance(value, Decimal):
        return str(value.quantize(Decimal(1).scaleb(-field.decimal_places)))
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if field.get_internal_type() == "DecimalField":
        return _value(field, Decimal(str(value)))
    return value


def _columns(model, leaves_out=None) -> list:
    if leaves_out is None:
        leaves_out = model.JOURNAL_LEAVES_OUT
    return [field for field in model._meta.concrete_fields
            if not field.primary_key and field.attname not in leaves_out]


def row_facts(row, names=None) -> dict:
    """The row's journaled columns by attribute name, as JSON values (all, or `names`)."""
    facts = {}
    for attname, field, as_is in _journaled_columns(type(row)):
        if names is None or attname in names:
            value = getattr(row, attname)
            facts[attname] = value if type(value) in as_is else _value(field, value)
    return facts


# What _value gives back unchanged, in any column but a decimal one (which writes an integer
# with its decimal places).
AS_IS = frozenset({str, int, bool, type(None)})


@cache
def _journaled_columns(model) -> tuple:
    """(attname, field, the value types _value leaves as they are) of the journaled columns;
    the same for every row of `model`, so read once per process."""
    return tuple((field.attname, field,
                  frozenset() if field.get_internal_type() == "DecimalField" else AS_IS)
                 for field in _columns(model))


def _body(row, *, kind, actor, at, parent, names=None) -> dict:
    return {"actor": actor, "at": _value(None, at), "kind": kind, "parent": parent,
            "row": row_facts(row, names), "table": row._meta.label_lower}


def _entry_sql(source: str, body: dict) -> tuple[str, list]:
    """INSERT of the entry about the row `source` returns (its `id`); the content's hash is
    computed by the database from the very text it stores."""
    return entry_insert_text(source), _entry_params(body)


def entry_insert_text(source: str) -> str:
    """_entry_sql's text, the same for every entry about a row of `source`."""
    return (f"INSERT INTO {TABLE} (subject, subject_id, kind, actor, parent_hash, content, "  # noqa: S608
            "content_hash, created_at) "
            "SELECT %s, s.id, %s, %s, %s, c.content, "
            "encode(sha256(convert_to(c.content, 'UTF8')), 'hex'), %s "
            f"FROM {source} s CROSS JOIN LATERAL "
            "(SELECT '{\"id\":' || s.id || ',' || %s AS content) c RETURNING content_hash")


def _entry_params(body: dict) -> list:
    rest = canonical(body)[1:]
    return [body["table"], body["kind"], body["actor"], body["parent"], body["at"], rest]


def _step_sql(source: str, body: dict) -> tuple[str, list]:
    """As _entry_sql, for a step of rows `source` returns whose tips the database reads: the
    newest entry of each row (the row is locked by the UPDATE that returns it). `body` has
    no parent; the statement writes it in, between `kind` and `row` as canonical order says."""
    head = canonical({key: body[key] for key in ("actor", "at", "kind")})[1:-1]
    tail = canonical({key: body[key] for key in ("row", "table")})[1:-1]
    sql = (f"INSERT INTO {TABLE} (subject, subject_id, kind, actor, parent_hash, content, "  # noqa: S608
           "content_hash, created_at) "
           "SELECT %s, s.id, %s, %s, t.tip, c.content, "
           "encode(sha256(convert_to(c.content, 'UTF8')), 'hex'), %s "
           f"FROM {source} s CROSS JOIN LATERAL "
           f"(SELECT (SELECT j.content_hash FROM {TABLE} j WHERE j.subject = %s "
           "AND j.subject_id = s.id ORDER BY j.id DESC LIMIT 1) AS tip) t CROSS JOIN LATERAL "
           "(SELECT '{\"id\":' || s.id || ',' || %s || ',\"parent\":' "
           "|| coalesce('\"' || t.tip || '\"', 'null') || ',' || %s || '}' AS content) c "
           "RETURNING content_hash")
    return sql, [body["table"], body["kind"], body["actor"], body["at"], body["table"],
                 head, tail]


# What an entry's time looks like (_value's isoformat), written by the database.
ISO_SQL = "to_char(({}) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"')"


def content_sql(model, subject_id: str, *, kind: str, actor: str, at: str,
                parent: str = "'null'", row: str | None = None) -> str:
    """The SQL expression of an entry's canonical content, for a database function that
    writes entries itself (operations/db_roles.py: prune). `subject_id`, `at` and `parent`
    are SQL (`parent` answering the JSON text of the parent: null or a quoted hash); `row`
    a PL/pgSQL row variable of the model's table whose every column the entry records, or
    None for a step that moves none. Only integer and time columns are written this way."""
    if row is None:
        columns = "'{}'"
    else:
        parts = []
        for field in sorted(_columns(model), key=lambda field: field.attname):
            value = f"{row}.{field.column}"
            if field.get_internal_type() == "DateTimeField":
                value = "'\"' || " + ISO_SQL.format(value) + " || '\"'"
            elif not field.get_internal_type().endswith("IntegerField"):
                raise ValueError(f"{field.attname}: only integer and time columns")
            parts.append(f"'\"{field.attname}\":' || {value}")
        columns = "'{' || " + " || ',' || ".join(parts) + " || '}'"
    head = canonical({"actor": actor})[1:-1]
    return (f"'{{\"id\":' || {subject_id} || ',{head},\"at\":\"' || {ISO_SQL.format(at)} || "
            f"'\",\"kind\":{json.dumps(kind)},\"parent\":' || {parent} || ',\"row\":' || "
            f"{columns} || ',\"table\":{json.dumps(model._meta.label_lower)}}}'")


def entry_of_insert_sql(source: str, row, *, kind=None, actor, at) -> tuple[str, list]:
    """The first entry of `row` (unsaved, its values final), for a statement whose CTE
    `source` inserts it and returns its `id` (coupons.write.one_statement)."""
    return entry_insert_text(source), entry_of_insert_params(row, kind=kind, actor=actor, at=at)


def entry_of_insert_params(row, *, kind=None, actor, at) -> list:
    """entry_of_insert_sql's parameters alone, for a caller that keeps its text."""
    return _entry_params(_body(row, kind=kind or type(row).JOURNAL_OPENS[0], actor=actor,
                               at=at, parent=None))


def journaled_moves(queryset, changes: dict, *, kind, actor, at) -> int:
    """UPDATE the queryset's rows to `changes`, each with the entry that records the move,
    in one statement; how many rows moved. For a move whose rows the caller has not read
    (a redemption that stops counting): each entry's parent is its row's newest entry."""
    model = queryset.model
    query = queryset.query.chain(UpdateQuery)
    query.add_update_values(changes)
    update, params = query.get_compiler(connection=connection).as_sql()
    moved = {}
    for name, value in changes.items():
        field = model._meta.get_field(name)
        moved[field.attname] = _value(field, value)
    body = {"actor": actor, "at": _value(None, at), "kind": kind, "row": moved,
            "table": model._meta.label_lower}
    entry, entry_params = _step_sql("moved", body)
    with connection.cursor() as cursor:
        cursor.execute(f"WITH moved AS ({update} RETURNING {model._meta.pk.column} AS id), "
                       f"entry AS ({entry}) SELECT count(*) FROM entry",
                       [*params, *entry_params])
        return cursor.fetchone()[0]


def journaled_bulk_create(rows: list, *, kind=None, actor=None, at=None) -> list:
    """bulk_create `rows` of one model, then their first entries in one more INSERT (a batch
    path: the scanners' bulk expiry and release). `actor` and `at` default to each row's
    `actor` and `created_at`."""
    if not rows:
        return rows
    model = type(rows[0])
    model.objects.bulk_create(rows)
    entries = []
    for row in rows:
        body = _body(row, kind=kind or model.JOURNAL_OPENS[0],
                     actor=actor or row.actor, at=at or row.created_at, parent=None)
        content = content_text(row.pk, body)
        entries.append(JournalEntry(
            subject=body["table"], subject_id=row.pk, kind=body["kind"], actor=body["actor"],
            parent_hash=None, content=content, content_hash=content_hash(content),
            created_at=at or row.created_at))
    JournalEntry.objects.bulk_create(entries)
    for row, entry in zip(rows, entries, strict=True):
        row.journal_tip = entry.content_hash
    return rows


def journaled_insert(row, *, kind=None, actor=None, at=None, ignore_conflicts=False):
    """INSERT `row` (unsaved) and its first journal entry, in one statement; the row.
    `kind` defaults to the model's first opening, `actor` and `at` to the row's own `actor`
    and `created_at`. With `ignore_conflicts`, a row a unique constraint refuses is neither
    written nor journaled, and the answer is None."""
    kind = kind or type(row).JOURNAL_OPENS[0]
    actor = actor or row.actor
    at = at or row.created_at
    qn = connection.ops.quote_name
    meta = row._meta
    names, params = [], []
    for field in meta.concrete_fields:
        if field.primary_key and getattr(row, field.attname) is None:
            continue
        names.append(qn(field.column))
        params.append(field.get_db_prep_save(field.pre_save(row, True), connection))
    insert = (f"INSERT INTO {qn(meta.db_table)} ({', '.join(names)}) "  # noqa: S608
              f"VALUES ({', '.join(['%s'] * len(names))}) "
              f"{'ON CONFLICT DO NOTHING ' if ignore_conflicts else ''}"
              f"RETURNING {qn(meta.pk.column)} AS id")
    entry, entry_params = _entry_sql("written", _body(row, kind=kind, actor=actor, at=at,
                                                      parent=None))
    with connection.cursor() as cursor:
        cursor.execute(f"WITH written AS ({insert}), entry AS ({entry}) "
                       "SELECT (SELECT id FROM written), (SELECT content_hash FROM entry)",
                       [*params, *entry_params])
        row.pk, row.journal_tip = cursor.fetchone()
    if row.pk is None:
        return None
    row._state.adding = False
    row._state.db = connection.alias
    return row


def journaled_update(row, *, where: dict, changes: dict, kind, actor, at) -> bool:
    """Compare-and-set `row` (filtered by its pk and `where`) to `changes`, with the journal
    entry that records them, in one statement. False when no row matched (nothing written).

    `row.journal_tip` (the hash of its newest entry, known from the write or the fold that
    checked it) is the new entry's parent."""
    model = type(row)
    for name, value in changes.items():
        setattr(row, name, value)
    moved = {model._meta.get_field(name).attname for name in changes}
    query = model.objects.filter(pk=row.pk, **where).query.chain(UpdateQuery)
    query.add_update_values(changes)
    update, params = query.get_compiler(connection=connection).as_sql()
    entry, entry_params = _entry_sql("moved", _body(row, kind=kind, actor=actor, at=at,
                                                    parent=row.journal_tip, names=moved))
    with connection.cursor() as cursor:
        cursor.execute(f"WITH moved AS ({update} RETURNING {model._meta.pk.column} AS id), "
                       f"entry AS ({entry}) SELECT (SELECT content_hash FROM entry)",
                       [*params, *entry_params])
        (tip,) = cursor.fetchone()
    if tip is None:
        return False
    row.journal_tip = tip
    return True


def with_journal(queryset):
    """The queryset's rows with their entries' contents in order (`journal`), read in the same
    statement: folding them costs no round trip."""
    model = queryset.model
    return queryset.annotate(journal=RawSQL(
        f"ARRAY(SELECT j.content FROM {TABLE} j WHERE j.subject = %s "  # noqa: S608
        f"AND j.subject_id = {model._meta.db_table}.{model._meta.pk.column} ORDER BY j.id)",
        [model._meta.label_lower]))


def fold(model, subject_id: int, contents: list[str]) -> tuple[dict | None, str | None, str]:
    """(the row the entries make, the newest entry's hash, the first problem or "")."""
    folded, parent = None, None
    for number, content in enumerate(contents, 1):
        problem = _entry_problem(model, subject_id, content, parent, first=number == 1)
        if problem:
            return folded, parent, gettext("entry %(n)d %(problem)s") % {"n": number,
                                                                        "problem": problem}
        entry = json.loads(content)
        folded = {**(folded or {}), **entry["row"]}
        parent = content_hash(content)
    return folded, parent, ""


def _entry_problem(model, subject_id, content, parent, *, first) -> str:
    try:
        entry = json.loads(content)
        body = {key: value for key, value in entry.items() if key != "id"}
        canonical_form = content_text(entry["id"], body)
    except (ValueError, KeyError, TypeError, AttributeError):
        return gettext("is not canonical journal JSON")
    if content != canonical_form:
        return gettext("is not in canonical form")
    if entry["id"] != subject_id or entry.get("table") != model._meta.label_lower:
        return gettext("is about another row")
    if entry.get("parent") != parent:
        return gettext("does not name the row's previous entry as its parent")
    kinds = model.JOURNAL_OPENS if first else model.JOURNAL_STEPS
    if entry.get("kind") not in kinds:
        return gettext("is a %(kind)s, which cannot come there") % {"kind": entry.get("kind")}
    row = entry.get("row")
    if not isinstance(row, dict):
        return gettext("records no columns")
    allowed = {field.attname for field in _columns(model)} if first else set(model.JOURNAL_MOVES)
    stray = sorted(set(row) - allowed)
    if stray:
        return gettext("sets %(columns)s, which no step may change") % {
            "columns": ", ".join(stray)}
    if first and set(row) != allowed and not set(allowed - set(row)) <= _added_later(model):
        return gettext("does not record every column")
    return ""


def _added_later(model) -> set[str]:
    """Columns a first entry may lack: those with a default, added to the table after entries
    were written (the row must then hold the default, `fold_problem` says)."""
    return {field.attname for field in _columns(model) if field.has_default() or field.null}


def _default(model, name):
    field = model._meta.get_field(name)
    return _value(field, field.get_default())


def fold_problem(row) -> str | None:
    """Why `row` (read with `with_journal`) is not the fold of its entries, naming the first
    difference; None when it is. Sets `row.journal_tip` for the next entry."""
    model = type(row)
    folded, row.journal_tip, problem = fold(model, row.pk, list(row.journal or []))
    if problem:
        return problem
    if folded is None:
        return gettext("has no journal entry")
    if json.loads(row.journal[-1])["kind"] == PRUNED:
        return gettext("is still here, but its journal says retention deleted it")
    facts = row_facts(row)
    for name, value in facts.items():
        recorded = folded[name] if name in folded else _default(model, name)
        if recorded != value:
            return gettext("%(column)s is %(row)s, its journal says %(journal)s") % {
                "column": name, "row": json.dumps(value), "journal": json.dumps(recorded)}
    return None


def require_folds(row) -> None:
    """Refuse to decide on a row that is not what its journal says (EVIDENCE_MISMATCH)."""
    problem = fold_problem(row)
    if problem is not None:
        raise EvidenceMismatch(table=row._meta.label_lower, id=row.pk, problem=problem)


# The first entry of a row that existed before the journal: what it held when the journal began.
EXISTING = "existing"
MIGRATION_ACTOR = "system:migration"


def existing_entries(model, rows, *, leaves_out=None, entry_model=JournalEntry) -> list:
    """Unsaved EXISTING entries, one per row of `rows` (saved rows of `model`): a row written
    before the journal, as it is now. A migration passes its historical models (which have no
    JOURNAL_LEAVES_OUT, so it names them)."""
    label = model._meta.label_lower
    at = timezone.now()
    entries = []
    for row in rows:
        body = {"actor": MIGRATION_ACTOR, "at": _value(None, at), "kind": EXISTING,
                "parent": None, "table": label,
                "row": {field.attname: _value(field, getattr(row, field.attname))
                        for field in _columns(model, leaves_out)}}
        content = content_text(row.pk, body)
        entries.append(entry_model(subject=label, subject_id=row.pk, kind=EXISTING,
                                   actor=MIGRATION_ACTOR, parent_hash=None, content=content,
                                   content_hash=content_hash(content), created_at=at))
    return entries


def backfill(apps, label: str, leaves_out: tuple[str, ...]) -> None:
    """A migration's step: the EXISTING entries of every row of `label` already there."""
    model = apps.get_model(label)
    entry_model = apps.get_model("coupons", "JournalEntry")
    entry_model.objects.bulk_create(
        existing_entries(model, model.objects.order_by("pk").iterator(), leaves_out=leaves_out,
                         entry_model=entry_model), batch_size=1000)


def journaled_models() -> list:
    return [model for model in apps.get_models() if issubclass(model, Journaled)]


def entry_columns_problem(entry) -> str | None:
    if entry.content_hash != content_hash(entry.content):
        return gettext("content_hash is not the SHA-256 of its content")
    try:
        content = json.loads(entry.content)
        said = (content["table"], content["id"], content["kind"], content["actor"],
                content["parent"])
    except (ValueError, KeyError, TypeError):
        return gettext("is not canonical journal JSON")
    if said != (entry.subject, entry.subject_id, entry.kind, entry.actor, entry.parent_hash):
        return gettext("its columns differ from its content")
    return None


def journal_problems():
    """(what, id, problem) for every entry and journaled row that fails, reading every entry
    and every row (no id range is skipped): an entry that is not what its hash says, a row
    that is not the fold of its entries, entries of a row that does not exist."""
    models = {model._meta.label_lower: model for model in journaled_models()}
    for entry in JournalEntry.objects.order_by("pk").iterator(chunk_size=2000):
        problem = entry_columns_problem(entry)
        if problem is None and entry.subject not in models:
            problem = gettext("is about %(table)s, which has no journal") % {
                "table": entry.subject}
        if problem is not None:
            yield "journal entry", entry.pk, problem
    for label, model in models.items():
        for row in with_journal(model.objects.order_by("pk")).iterator(chunk_size=2000):
            problem = fold_problem(row)
            if problem is not None:
                yield label, row.pk, problem
        # A row retention deleted ends with the `pruned` entry prune wrote as it deleted it.
        pruned = (JournalEntry.objects.filter(subject=label, subject_id=OuterRef("subject_id"),
                                              kind=PRUNED)
                  .exclude(Exists(JournalEntry.objects.filter(
                      parent_hash=OuterRef("content_hash")))))
        orphans = (JournalEntry.objects.filter(subject=label)
                   .exclude(subject_id__in=model.objects.values("pk")).exclude(Exists(pruned))
                   .values_list("subject_id", flat=True).distinct().order_by("subject_id"))
        for subject_id in orphans:
            yield label, subject_id, gettext("has journal entries but no row")

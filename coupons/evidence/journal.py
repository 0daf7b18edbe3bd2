"""The journal: every write of an evidence row is an entry anyone can verify.

The database writes the entries: each journaled table's row trigger (coupons/evidence/
journal_sql.py) appends the entry of every INSERT and UPDATE from the row as stored; the
application only declares the actor and the step (coupons/write/declared.py) and holds no
INSERT on the journal. An entry's content is canonical JSON:

    {"id":<row id>,"actor":...,"at":...,"kind":...,"parent":<hash or null>,"row":{...},"table":...}

`id` first, then the other keys and every nested object's keys sorted, no whitespace, UTF-8
(`canonical`; the database's `coupons_canonical_json` prints the same text). Its SHA-256
(`content_hash`) is public: no key is needed to recompute it. `parent` is the hash of the
row's previous entry, null for the first; `row` holds every column for the first entry and the
moved columns after that; `at` is the database's clock.

Folding a row's entries in order gives what the services wrote; `fold_problem` compares that
with the row and names the first column that differs. A decision is taken only on a row that
equals its fold (`require_folds`), so an UPDATE past the services (an amount, a proposer, an
action) is refused at the approval instead of being approved as it stands.

What the journal cannot tell: a write by someone with the application's login that the
services could have made (an approval under a made-up actor name). Every such write is still
an entry, with the moves its step allows (`Journaled.journal_moves`), the actor it declared
and the database's time.
"""

import hashlib
import json
import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache

from django.apps import apps
from django.db.models import Exists, OuterRef
from django.db.models.expressions import RawSQL
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


def journaled_fields(model, leaves_out=None) -> list:
    """The columns an entry records: every concrete one but the id and those left out."""
    if leaves_out is None:
        leaves_out = model.JOURNAL_LEAVES_OUT
    return [field for field in model._meta.get_fields()
            if field.concrete and not field.many_to_many and not field.primary_key
            and field.attname not in leaves_out]


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
                 for field in journaled_fields(model))


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
    allowed = ({field.attname for field in journaled_fields(model)} if first
               else set(model.journal_moves(entry["kind"])))
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
    return {field.attname for field in journaled_fields(model) if field.has_default() or field.null}


def _default(model, name):
    field = model._meta.get_field(name)
    return _value(field, field.get_default())


def fold_problem(row) -> str | None:
    """Why `row` (read with `with_journal`) is not the fold of its entries, naming the first
    difference; None when it is. Sets `row.journal_tip`, the version a decision is taken on
    (coupons.evidence.tips.require_tip)."""
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
                        for field in journaled_fields(model, leaves_out)}}
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

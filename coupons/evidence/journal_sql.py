"""The database writes the journal: each journaled table's row trigger, generated from its model.

Every INSERT, UPDATE (and, for a table retention prunes, DELETE) of a journaled row
(coupons.models.Journaled) fires an AFTER ROW trigger that appends the row's journal entry
from the row as stored: the database's clock, the content's SHA-256 computed by the
database, the parent read from the row's current tip. The application only declares, in
the transaction, who writes (`coupons.actor`) and which step it is (`coupons.step.<table>`,
an opening other than the model's first: `coupons.opening.<table>`); coupons/write/declared.py
sets them in the statement that writes. The trigger refuses a write with no declared actor,
a step its table does not take and a step that moves a column that step may not move
(`Journaled.journal_moves`). An UPDATE that moves no journaled column writes no entry.

The functions are SECURITY DEFINER, owned by JOURNAL_ROLE (NOLOGIN, no members), the one
role that may INSERT into the journal, with a fixed search_path (pg_catalog, pg_temp) and
every one of our names schema-qualified, so no object a caller creates (a temporary table
named like the journal, a function in its own schema) stands in for ours. The application's
login owns none of them: it can neither replace nor drop nor disable them.

The content is the canonical JSON the application wrote before (coupons/evidence/journal.py
`canonical`, `_value`): `coupons_canonical_json` prints a jsonb with every object's keys in
code point order (COLLATE "C" orders UTF-8 bytes, which is code point order) and PostgreSQL's
JSON string escapes, which are Python's with ensure_ascii off.
"""

import json

from coupons.evidence.journal import EXISTING, TABLE, journaled_fields, journaled_models
from coupons.models.journal import PRUNED

# Owns the trigger functions; no one logs in as it.
JOURNAL_ROLE = "coupon_journal"
ACTOR_SETTING = "coupons.actor"
CANONICAL_FUNCTION = "coupons_canonical_json"
TRIGGER = "journal_written"
# What an entry's time looks like (journal._value's isoformat), on the database's clock.
ISO = "YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\""


def step_setting(model) -> str:
    return f"coupons.step.{model._meta.db_table}"


def opening_setting(model) -> str:
    return f"coupons.opening.{model._meta.db_table}"


def function_name(model) -> str:
    return f"coupons_journal_{model._meta.db_table}"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def rules(model) -> dict:
    """What the trigger of `model`'s table allows: the openings (the first one when none is
    declared; `existing` is the migrations' alone) and each step with the columns it may move."""
    return {"opens": [kind for kind in model.JOURNAL_OPENS if kind != EXISTING],
            "steps": {kind: sorted(model.journal_moves(kind)) for kind in model.JOURNAL_STEPS}}


def journaled_columns(model) -> list:
    return sorted(journaled_fields(model), key=lambda field: field.attname)


def _value_sql(field, record: str) -> str:
    """The jsonb of column `field` of `record` (NEW or OLD), as journal._value writes it."""
    column = f"{record}.{_quoted(field.column)}"
    kind = field.get_internal_type()
    if kind == "DateTimeField":
        return f"to_jsonb(to_char({column} AT TIME ZONE 'UTC', '{ISO}'))"
    if kind == "DecimalField":  # numeric(p, s) prints its s places: Decimal.quantize's string
        return f"to_jsonb({column}::text)"
    if kind == "JSONField":
        return column
    return f"to_jsonb({column})"


def canonical_function_sql() -> str:
    return f"""
        CREATE OR REPLACE FUNCTION public.{CANONICAL_FUNCTION}(value jsonb) RETURNS text
        LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $fn$
        BEGIN
            CASE jsonb_typeof(value)
            WHEN 'object' THEN
                RETURN '{{' || coalesce((
                    SELECT string_agg(to_jsonb(e.key)::text || ':'
                                      || public.{CANONICAL_FUNCTION}(e.value), ','
                                      ORDER BY e.key COLLATE "C")
                    FROM jsonb_each(value) e), '') || '}}';
            WHEN 'array' THEN
                RETURN '[' || coalesce((
                    SELECT string_agg(public.{CANONICAL_FUNCTION}(a.value), ',' ORDER BY a.n)
                    FROM jsonb_array_elements(value) WITH ORDINALITY a(value, n)), '') || ']';
            ELSE
                RETURN value::text;
            END CASE;
        END $fn$"""


def trigger_function_sql(model) -> str:
    label = model._meta.label_lower
    columns = journaled_columns(model)
    every = ", ".join(f"'{field.attname}', {_value_sql(field, 'NEW')}" for field in columns)
    moves = "\n".join(
        f"            IF NEW.{_quoted(field.column)} IS DISTINCT FROM "
        f"OLD.{_quoted(field.column)} THEN moved := moved || "
        f"jsonb_build_object('{field.attname}', {_value_sql(field, 'NEW')}); END IF;"
        for field in columns)
    pk = _quoted(model._meta.pk.column)
    literal = "'" + json.dumps(rules(model), sort_keys=True).replace("'", "''") + "'"
    return f"""
        CREATE OR REPLACE FUNCTION public.{function_name(model)}() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            rules CONSTANT jsonb := {literal};
            entry_actor text := current_setting('{ACTOR_SETTING}', true);
            entry_kind text;
            row_id bigint;
            moved jsonb := '{{}}';
            parent text;
            entry_content text;
        BEGIN
            IF TG_OP = 'INSERT' THEN
                row_id := NEW.{pk};
                entry_kind := coalesce(
                    nullif(current_setting('{opening_setting(model)}', true), ''),
                    rules->'opens'->>0);
                IF NOT (rules->'opens') ? entry_kind THEN
                    RAISE EXCEPTION 'journal: % is no opening of {label}', entry_kind
                        USING ERRCODE = 'check_violation';
                END IF;
                moved := jsonb_build_object({every});
            ELSE
                entry_kind := coalesce(current_setting('{step_setting(model)}', true), '');
                IF TG_OP = 'UPDATE' THEN
                    row_id := NEW.{pk};
{moves}
                    -- A column outside the evidence moved alone (a finding's last_seen_at).
                    IF moved = '{{}}'::jsonb THEN RETURN NULL; END IF;
                ELSIF entry_kind <> '{PRUNED}' THEN
                    RAISE EXCEPTION 'journal: a {label} row is deleted only by retention'
                        USING ERRCODE = 'check_violation';
                ELSE
                    row_id := OLD.{pk};
                END IF;
                IF NOT (rules->'steps') ? entry_kind THEN
                    RAISE EXCEPTION 'journal: "%" is no step of {label}', entry_kind
                        USING ERRCODE = 'check_violation';
                END IF;
                IF EXISTS (SELECT 1 FROM jsonb_object_keys(moved) k
                           WHERE NOT (rules->'steps'->entry_kind) ? k) THEN
                    RAISE EXCEPTION 'journal: a {label} % step may not move %', entry_kind,
                        (SELECT string_agg(k, ', ') FROM jsonb_object_keys(moved) k
                         WHERE NOT (rules->'steps'->entry_kind) ? k)
                        USING ERRCODE = 'check_violation';
                END IF;
                SELECT j.content_hash INTO parent FROM public.{TABLE} j
                 WHERE j.subject = '{label}' AND j.subject_id = row_id
                 ORDER BY j.id DESC LIMIT 1;
            END IF;
            IF coalesce(entry_actor, '') = '' THEN
                RAISE EXCEPTION 'journal: a {label} write declares no actor ({ACTOR_SETTING})'
                    USING ERRCODE = 'insufficient_privilege';
            END IF;
            entry_content := '{{"id":' || row_id || ',' || substr(public.{CANONICAL_FUNCTION}(
                jsonb_build_object('actor', entry_actor, 'at', to_char(now() AT TIME ZONE 'UTC',
                                   '{ISO}'), 'kind', entry_kind, 'parent', parent, 'row', moved,
                                   'table', '{label}')), 2);
            INSERT INTO public.{TABLE} (subject, subject_id, kind, actor, parent_hash,
                                        content, content_hash, created_at)
            VALUES ('{label}', row_id, entry_kind, entry_actor, parent, entry_content,
                    encode(sha256(convert_to(entry_content, 'UTF8')), 'hex'), now());
            RETURN NULL;
        END $fn$"""


def trigger_sql(model) -> str:
    events = "INSERT OR UPDATE OR DELETE" if PRUNED in model.JOURNAL_STEPS else "INSERT OR UPDATE"
    table = _quoted(model._meta.db_table)
    return (f"CREATE OR REPLACE TRIGGER {TRIGGER} AFTER {events} ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION public.{function_name(model)}()")


def install(cursor, app_role: str) -> None:
    """The canonical function and every journaled table's trigger, owned by JOURNAL_ROLE, which
    alone may INSERT into the journal (operations/db_roles.py calls it)."""
    role = _quoted(JOURNAL_ROLE)
    app = _quoted(app_role)
    for statement in (
        f"GRANT USAGE ON SCHEMA public TO {role}",
        f"REVOKE ALL ON {TABLE} FROM {role}",
        f"GRANT SELECT, INSERT ON {TABLE} TO {role}",
        f"GRANT USAGE ON SEQUENCE {TABLE}_id_seq TO {role}",
        canonical_function_sql(),
        f"ALTER FUNCTION public.{CANONICAL_FUNCTION}(jsonb) OWNER TO {role}",
    ):
        cursor.execute(statement)
    for model in journaled_models():
        name = f"public.{function_name(model)}()"
        cursor.execute(trigger_function_sql(model))
        cursor.execute(f"ALTER FUNCTION {name} OWNER TO {role}")
        cursor.execute(trigger_sql(model))
        cursor.execute(f"REVOKE ALL ON FUNCTION {name} FROM PUBLIC, {app}")


def installed_rules(cursor) -> dict:
    """{table label: the rules its installed trigger function enforces}, read back from the
    database (the literal each function's body holds)."""
    found = {}
    for model in journaled_models():
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = %s "
                       "AND pronamespace = 'public'::regnamespace", [function_name(model)])
        row = cursor.fetchone()
        if row is not None:
            literal = row[0].split("rules CONSTANT jsonb := '", 1)[1].split("';", 1)[0]
            found[model._meta.label_lower] = json.loads(literal.replace("''", "'"))
    return found

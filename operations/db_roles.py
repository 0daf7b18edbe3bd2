"""The database roles (docs/evidence.md and "Production"), on PostgreSQL.

- The owner (MIGRATION_DATABASE_URL) runs migrations and this set-up; it owns every table,
  trigger and function.
- `APP_ROLE` is what the server, workers, scanners, relay and consumer log in as. It owns
  nothing, so it cannot ALTER a table, DISABLE a trigger or CREATE in the schema; it is no
  superuser, so it cannot SET session_replication_role. It may read everywhere and insert
  everywhere but the journal's tables, UPDATE only where rows legitimately move (on coupons,
  leases, decisions, compensations, goodwill proposals, cases, findings and history tables
  only the columns the services move, and the triggers still hold each move to its allowed
  shape), DELETE only on
  framework tables (sessions, sign-in attempts, group memberships), never TRUNCATE.
- `PRUNER_ROLE` (NOLOGIN, no members) owns the prune functions, SECURITY DEFINER: it holds
  DELETE on exactly the tables `manage.py prune` empties, and the history triggers let a
  DELETE through only when the current user is this role. The application role may call one,
  `coupons_prune()`, which takes no argument: it computes each cutoff on the database's own
  clock, calls the three that delete (each refuses a cutoff inside its window, and only their
  owner may call them) and records the run, the one writer of a PruneRun. An outbox event's
  age is its `published_at`, which the database stamps on its clock (OnDatabaseClock), so
  nothing the application writes makes a recent row old. It also owns the outbox's day
  partitions (operations/outbox_partitions.py), so the outbox function can drop a past day
  whole; the application role owns none and can drop none.
- `JOURNAL_ROLE` (NOLOGIN, no members) owns the journal's trigger functions
  (coupons/evidence/journal_sql.py, installed here from the models) and is the only role that
  may INSERT into the journal: the application role reads it, never writes it.

Idempotent: revokes and grants again on every run. Run it after every `migrate` (bin/serve
does); tables a migration adds are readable and insertable at once through the default
privileges, but get their UPDATE grants only on that rerun.
"""

import os
import time

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, connection, transaction
from psycopg import sql

from common.roles import APP_ROLE
from coupons.evidence import journal_sql
from coupons.evidence.journal_sql import ACTOR_SETTING, JOURNAL_ROLE, step_setting
from coupons.models import ConflictCase, Finding, GoodwillProposal, InboxMessage
from coupons.models.append_only import PRUNER_ROLE
from coupons.models.journal import PRUNED as PRUNED_ENTRY
from coupons.models.retention import PRUNE_ACTOR
from coupons.models.state_moves import MOVING as STATE_COLUMNS
from operations.outbox_partitions import outbox_partitions_ahead
from refunds.models import Compensation, RefundCoupon

APP_PASSWORD_ENV = "COUPON_APP_DB_PASSWORD"

# Rows that move: the whole row.
UPDATABLE = [
    "coupons_serviceclient", "coupons_coupontemplate",
    "coupons_idempotencyrecord", "coupons_reconciliationrun",
    # A cache the check moves forward (sealed; a forged row is ignored, never trusted).
    "coupons_checkwatermark",
    "refunds_returnpolicy", "refunds_returnpolicyversion",
    # Derived from the profile facts, which the inbox keeps; a newer fact rewrites the row.
    "coupons_customerprofile",
]


def _moving(model) -> list[str]:
    """The columns a journaled row's later entries may move (its JOURNAL_MOVES, and what the
    journal leaves out): what its services' UPDATEs name. The rest of the row (what was
    proposed, received, found; who proposed it) is never the application's to rewrite."""
    names = [*model.JOURNAL_MOVES, *getattr(model, "JOURNAL_LEAVES_OUT", ())]
    return [model._meta.get_field(name).column for name in names]


# Only the columns the services move; the triggers hold each move to its allowed shape (a
# coupon's status along the transition table one version at a time, a decision's, a
# compensation's, a case's and a finding's status one step forward, a decided row frozen).
UPDATABLE_COLUMNS = {
    "coupons_usercoupon": [*STATE_COLUMNS, "updated_at"],
    # A lease ends or is renewed; whose it is (order, token, coupon, version) never moves.
    "coupons_couponlock": ["status", "expires_at", "ended_at"],
    "coupons_conflictcase": _moving(ConflictCase),
    "coupons_finding": _moving(Finding),
    "refunds_compensation": _moving(Compensation),
    "refunds_refundcoupon": _moving(RefundCoupon),
    "coupons_goodwillproposal": _moving(GoodwillProposal),
    # History rows with one column the services move.
    "coupons_redemption": ["succeeded"],
    "coupons_inboxmessage": ["outcome"],
    "coupons_outboxevent": ["published_at"],
}
# The console's own rows a person changes or deletes (settings, saved filters).
PERSONAL = ["timeline_consolepreference", "timeline_savedfilter"]
# Everything else of ours (the ledger, rejections, order bindings, expiry warnings, order
# facts, presale settlements, template versions, prune runs, staff notes, the console's view
# log) is SELECT and INSERT only.
OUR_PREFIXES = ("coupons_", "refunds_", "timeline_")

# What the application calls (operations/retention.py); it calls the three that delete, which
# only their owner may call.
PRUNE_FUNCTION = "coupons_prune"
PRUNE_FUNCTIONS = ("coupons_prune_outbox", "coupons_prune_idempotency", "coupons_prune_inbox")
PRUNED = ["coupons_outboxevent", "coupons_idempotencyrecord", "coupons_inboxmessage"]

# Run as PRUNER_ROLE whoever calls them (_definer_sql).
PRUNE_SQL = {
    "coupons_prune_outbox": """
        DELETE FROM coupons_outboxevent
        WHERE published_at IS NOT NULL AND published_at < cutoff""",
    "coupons_prune_idempotency": """
        DELETE FROM coupons_idempotencyrecord
        WHERE status = 'COMPLETED' AND completed_at < cutoff""",
    "coupons_prune_inbox": """
        DELETE FROM coupons_inboxmessage
        WHERE received_at < cutoff
          AND id NOT IN (SELECT first_message_id FROM coupons_orderfact
                         WHERE first_message_id IS NOT NULL)""",
}


def retention_floors() -> dict[str, str]:
    windows = settings.COUPONS
    return {
        "coupons_prune_outbox": f"{int(windows['OUTBOX_RETENTION_DAYS'])} days",
        "coupons_prune_idempotency": f"{int(windows['IDEMPOTENCY_RETENTION_HOURS'])} hours",
        "coupons_prune_inbox": f"{int(windows['INBOX_RETENTION_DAYS'])} days",
    }


# The outbox is partitioned by day on PostgreSQL (operations/outbox_partitions.py): first drop
# every day partition that ended before the cutoff and holds no unpublished row and no row
# published inside the window (two index probes), then delete what is left row by row (the
# DEFAULT partition, and a kept day's published rows). The function's owner, coupon_pruner,
# owns the day partitions, which is what DROP TABLE needs; the parent stays the owner's.
# Dropped rows are counted from the planner's statistics when it has them (constant time).
DROP_PARTITIONS_SQL = {
    "coupons_prune_outbox": """
        FOR part IN
            SELECT c.oid::regclass AS name, pg_get_expr(c.relpartbound, c.oid) AS bound,
                   c.reltuples::bigint AS estimate
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'coupons_outboxevent'::regclass
        LOOP
            CONTINUE WHEN part.bound = 'DEFAULT';
            upper_bound := (regexp_match(part.bound, 'TO \\(''([^'']+)''\\)'))[1]::timestamptz;
            CONTINUE WHEN upper_bound > cutoff;
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM %1$s WHERE published_at IS NULL)'
                           ' OR EXISTS (SELECT 1 FROM %1$s WHERE published_at >= $1)',
                           part.name) INTO kept USING cutoff;
            CONTINUE WHEN kept;
            IF part.estimate >= 0 THEN
                dropped := dropped + part.estimate;
            ELSE
                EXECUTE format('SELECT count(*) FROM %s', part.name) INTO counted;
                dropped := dropped + counted;
            END IF;
            EXECUTE format('DROP TABLE %s', part.name);
        END LOOP;""",
}


# The one writer of journal log positions (NOLOGIN, no members): it owns the sequencer function
# and is the only role that may INSERT a leaf.
SEQUENCER_ROLE = "coupon_sequencer"
SEQUENCE_FUNCTION = "coupons_sequence_journal"
# Sequencers take turns on the log table itself, in a mode that needs UPDATE on it (PostgreSQL's
# LOCK rules): the application role, which may only read it, cannot take or hold a lock that
# keeps a sequencer waiting (an advisory lock any login can take could). Each INSERT then sees
# every position the one before it gave. A caller that bounds its waits by less keeps its bound.
SEQUENCER_LOCK_SQL = "LOCK TABLE coupons_journalleaf IN SHARE ROW EXCLUSIVE MODE"
SEQUENCER_LOCK_TIMEOUT = "10s"


def _definer_sql(name: str, params: str, types: str, owner: str, *, declare: str,
                 body: sql.Composable, callable_by_app: bool = True) -> sql.Composed:
    """A SECURITY DEFINER function answering a bigint: it runs as `owner` whoever calls it;
    besides its owner only the application role may call it, and only if `callable_by_app`.
    The search_path is fixed, pg_temp last, so a caller's temporary table cannot stand in for
    one of ours (PostgreSQL's advice for SECURITY DEFINER)."""
    return sql.SQL("""
        CREATE OR REPLACE FUNCTION {name}({params}) RETURNS bigint
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
        AS $fn$
        DECLARE
            {declare}
        BEGIN
            {body}
        END $fn$;
        ALTER FUNCTION {name}({types}) OWNER TO {owner};
        REVOKE ALL ON FUNCTION {name}({types}) FROM PUBLIC, {app};
        {grant}
    """).format(name=sql.Identifier(name), params=sql.SQL(params), types=sql.SQL(types),
                declare=sql.SQL(declare), body=body, owner=sql.Identifier(owner),
                app=sql.Identifier(APP_ROLE), grant=sql.SQL(
                    "GRANT EXECUTE ON FUNCTION {name}({types}) TO {app};" if callable_by_app
                    else "").format(name=sql.Identifier(name), types=sql.SQL(types),
                                    app=sql.Identifier(APP_ROLE)))


def _sequencer_sql() -> sql.Composed:
    """The sequencer: the journal entries without a position, in id order (at most
    `max_entries`), get the next consecutive ones, with their leaf hashes, in one statement;
    then every complete subtree those positions close gets its stored hash (JournalNode),
    computed by the database from the leaves and nodes below it."""
    body = sql.SQL("""
            IF current_setting('lock_timeout')::interval = interval '0'
               OR current_setting('lock_timeout')::interval > interval {bound} THEN
                PERFORM set_config('lock_timeout', {bound}, true);
            END IF;
            {lock};
            SELECT coalesce(max(index) + 1, 0) INTO first_new FROM coupons_journalleaf;
            INSERT INTO coupons_journalleaf (index, entry_id, leaf_hash, sequenced_at)
            SELECT base.next + row_number() OVER (ORDER BY e.id) - 1, e.id,
                   encode(sha256('\\x00'::bytea || convert_to(e.content, 'UTF8')), 'hex'),
                   now()
            FROM (SELECT coalesce(max(index) + 1, 0) AS next FROM coupons_journalleaf) base,
                 (SELECT id, content FROM coupons_journalentry j
                  WHERE NOT EXISTS (SELECT 1 FROM coupons_journalleaf l WHERE l.entry_id = j.id)
                  ORDER BY id LIMIT max_entries) e;
            GET DIAGNOSTICS added = ROW_COUNT;
            -- A leaf at an odd position closes the subtree it completes with its left
            -- sibling, and so on up while the position stays odd.
            FOR leaf IN SELECT index, leaf_hash FROM coupons_journalleaf
                        WHERE index >= first_new ORDER BY index LOOP
                lvl := 0;
                pos := leaf.index;
                node := decode(leaf.leaf_hash, 'hex');
                WHILE pos % 2 = 1 LOOP
                    IF lvl = 0 THEN
                        SELECT decode(l.leaf_hash, 'hex') INTO left_node
                          FROM coupons_journalleaf l WHERE l.index = pos - 1;
                    ELSE
                        SELECT decode(n.hash, 'hex') INTO left_node
                          FROM coupons_journalnode n WHERE n.level = lvl AND n.position = pos - 1;
                    END IF;
                    node := sha256('\\x01'::bytea || left_node || node);
                    lvl := lvl + 1;
                    pos := pos / 2;
                    INSERT INTO coupons_journalnode (level, position, hash)
                    VALUES (lvl, pos, encode(node, 'hex'));
                END LOOP;
            END LOOP;
            RETURN added;""").format(lock=sql.SQL(SEQUENCER_LOCK_SQL),
                                     bound=sql.Literal(SEQUENCER_LOCK_TIMEOUT))
    return _definer_sql(SEQUENCE_FUNCTION, "max_entries integer", "integer", SEQUENCER_ROLE,
                        declare="added bigint; first_new bigint; leaf record; lvl integer; "
                                "pos bigint; node bytea; left_node bytea;", body=body)


def _recorded(name: str, delete: str) -> str:
    """The inbox's DELETE declares itself retention's (`pruned`, by PRUNE_ACTOR): the journal
    trigger appends each deleted message's `pruned` entry (its rows go, its entries stay:
    verify_journal expects it gone). The other tables prune copies, not evidence."""
    if name != "coupons_prune_inbox":
        return delete
    return (f"PERFORM set_config('{ACTOR_SETTING}', '{PRUNE_ACTOR}', true), "
            f"set_config('{step_setting(InboxMessage)}', '{PRUNED_ENTRY}', true);\n"
            f"            {delete}")


def _function_sql(name: str, floor: str) -> sql.Composed:
    body = sql.SQL("""
            -- The database's clock, not the caller's: no cutoff inside the window passes.
            IF cutoff IS NULL OR cutoff > now() - interval {floor} THEN
                RAISE EXCEPTION 'prune: cutoff % is inside the % retention window',
                    cutoff, {floor};
            END IF;
            {drop_partitions}
            {delete};
            GET DIAGNOSTICS removed = ROW_COUNT;
            RETURN removed + dropped;""").format(
        floor=sql.Literal(floor), delete=sql.SQL(_recorded(name, PRUNE_SQL[name])),
        drop_partitions=sql.SQL(DROP_PARTITIONS_SQL.get(name, "")),
    )
    return _definer_sql(
        name, "cutoff timestamptz", "timestamptz", PRUNER_ROLE, body=body,
        declare="removed bigint; dropped bigint := 0; counted bigint; part record;"
                " upper_bound timestamptz; kept boolean;",
        callable_by_app=False,
    )


def _prune_sql(floors: dict[str, str]) -> sql.Composed:
    """`manage.py prune`'s one entry: the three cutoffs on the database's clock, each its
    window before now(), the three deletes, and their PruneRun row, which only this function
    may insert (its `inserted_by_prune` trigger). The caller chooses nothing."""
    body = sql.SQL("""
            -- The run's journal entry is the trigger's, as retention's.
            PERFORM set_config({actor_setting}, {actor}, true);
            outbox_cut := now() - interval {outbox};
            idempotency_cut := now() - interval {idempotency};
            inbox_cut := now() - interval {inbox};
            INSERT INTO coupons_prunerun (ran_at, outbox_before, idempotency_before,
                                          inbox_before, outbox_deleted, idempotency_deleted,
                                          inbox_deleted)
            VALUES (now(), outbox_cut, idempotency_cut, inbox_cut,
                    coupons_prune_outbox(outbox_cut), coupons_prune_idempotency(idempotency_cut),
                    coupons_prune_inbox(inbox_cut))
            RETURNING * INTO run;
            RETURN run.id;""").format(
        actor_setting=sql.Literal(ACTOR_SETTING), actor=sql.Literal(PRUNE_ACTOR),
        outbox=sql.Literal(floors["coupons_prune_outbox"]),
        idempotency=sql.Literal(floors["coupons_prune_idempotency"]),
        inbox=sql.Literal(floors["coupons_prune_inbox"]),
    )
    return _definer_sql(
        PRUNE_FUNCTION, "", "", PRUNER_ROLE, body=body,
        declare="outbox_cut timestamptz; idempotency_cut timestamptz; inbox_cut timestamptz;"
                " run coupons_prunerun%ROWTYPE;",
    )


def _run(cursor, statement: sql.Composable) -> None:
    cursor.execute(statement.as_string(cursor.connection))


def _ensure_role(cursor, role: str, *, login: bool, password: str | None) -> None:
    """CREATE ROLE unless it exists. Roles belong to the whole cluster: test databases set up
    at once race here, so a duplicate from another session counts as created."""
    cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
    if cursor.fetchone() is None:
        if login and password is None:
            raise ImproperlyConfigured(
                f"{APP_PASSWORD_ENV} is required to create the {role} login role"
            )
        options = sql.SQL("LOGIN PASSWORD {}").format(sql.Literal(password)) if login else (
            sql.SQL("NOLOGIN"))
        try:
            with transaction.atomic():
                _run(cursor, sql.SQL("CREATE ROLE {} {} NOSUPERUSER NOCREATEDB NOCREATEROLE")
                     .format(sql.Identifier(role), options))
        except DatabaseError:
            cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
            if cursor.fetchone() is None:
                raise
    elif login and password is not None:
        statement = sql.SQL("ALTER ROLE {} LOGIN PASSWORD {}").format(
            sql.Identifier(role), sql.Literal(password))
        for attempt in range(3):  # "tuple concurrently updated" when another session does it
            try:
                with transaction.atomic():
                    _run(cursor, statement)
                break
            except DatabaseError:
                if attempt == 2:
                    raise
                time.sleep(0.1)


def _insert_without_ids(cursor, app) -> None:
    """INSERT on every column but the ids the database hands out (identity or serial).

    A row inserted with an id of its own, say the sequence's next ones, made the inserts that
    drew those ids fail, the refusals' records with them. Without the privilege on the column
    the role can only take an id from its sequence (PostgreSQL's column INSERT privilege: an
    INSERT may name only granted columns, the others get their defaults).
    """
    cursor.execute("""
        SELECT c.relname, array_agg(a.attname::text ORDER BY a.attnum)
                            FILTER (WHERE a.attidentity = '' AND (d.adbin IS NULL
                                    OR pg_get_expr(d.adbin, d.adrelid) NOT LIKE %s))
          FROM pg_class c
          JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
          LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
         WHERE c.relkind IN ('r', 'p')
         GROUP BY c.relname
        HAVING bool_or(a.attidentity <> '' OR pg_get_expr(d.adbin, d.adrelid) LIKE %s)
    """, ["nextval(%", "nextval(%"])
    for table, columns in cursor.fetchall():
        _run(cursor, sql.SQL("REVOKE INSERT ON {} FROM {}").format(sql.Identifier(table), app))
        _run(cursor, sql.SQL("GRANT INSERT ({}) ON {} TO {}").format(
            sql.SQL(", ").join(map(sql.Identifier, columns)), sql.Identifier(table), app))


def setup_db_roles() -> list[str]:
    """Creates or refreshes both roles and every grant; answers the tables it granted UPDATE."""
    password = os.environ.get(APP_PASSWORD_ENV) or None
    app, pruner = sql.Identifier(APP_ROLE), sql.Identifier(PRUNER_ROLE)
    with connection.cursor() as cursor:
        _ensure_role(cursor, APP_ROLE, login=True, password=password)
        _ensure_role(cursor, PRUNER_ROLE, login=False, password=None)
        _ensure_role(cursor, SEQUENCER_ROLE, login=False, password=None)
        _ensure_role(cursor, JOURNAL_ROLE, login=False, password=None)
        tables = set(connection.introspection.table_names(cursor))
        with transaction.atomic():
            cursor.execute("SELECT current_database()")
            database = sql.Identifier(cursor.fetchone()[0])
            for statement in (
                "GRANT CONNECT ON DATABASE {db} TO {app}",
                # Nobody but the owner creates objects (PostgreSQL 15's default, made explicit).
                "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
                "GRANT USAGE ON SCHEMA public TO {app}, {pruner}",
                "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {app}, {pruner}",
                "REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {app}, {pruner}",
                "GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO {app}",
                "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {app}",
                "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT ON TABLES TO {app}",
                "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES "
                "TO {app}",
            ):
                _run(cursor, sql.SQL(statement).format(db=database, app=app, pruner=pruner))
            _insert_without_ids(cursor, app)
            framework = sorted(t for t in tables if not t.startswith(OUR_PREFIXES))
            personal = [t for t in PERSONAL if t in tables]
            for table in [*framework, *personal]:  # sessions, auth, axes, admin log, settings
                _run(cursor, sql.SQL("GRANT UPDATE, DELETE ON {} TO {}").format(
                    sql.Identifier(table), app))
            for table in UPDATABLE:
                _run(cursor, sql.SQL("GRANT UPDATE ON {} TO {}").format(
                    sql.Identifier(table), app))
            for table, columns in UPDATABLE_COLUMNS.items():
                _run(cursor, sql.SQL("GRANT UPDATE ({}) ON {} TO {}").format(
                    sql.SQL(", ").join(map(sql.Identifier, columns)), sql.Identifier(table), app))
            for table in PRUNED:
                _run(cursor, sql.SQL("GRANT SELECT, DELETE ON {} TO {}").format(
                    sql.Identifier(table), pruner))
            _run(cursor, sql.SQL("GRANT SELECT ON coupons_orderfact TO {}").format(pruner))
            # A prune run is recorded by the prune function only, never by the application.
            _run(cursor, sql.SQL("REVOKE INSERT ON coupons_prunerun FROM {}").format(app))
            _run(cursor, sql.SQL("GRANT SELECT, INSERT ON coupons_prunerun TO {}").format(pruner))
            # The journal is written by the database alone: its triggers' functions, owned by
            # JOURNAL_ROLE. No login INSERTs an entry, nor chooses its id.
            _run(cursor, sql.SQL("REVOKE INSERT, UPDATE, DELETE ON coupons_journalentry "
                                 "FROM {}").format(app))
            _run(cursor, sql.SQL("REVOKE USAGE, UPDATE ON SEQUENCE coupons_journalentry_id_seq "
                                 "FROM {}").format(app))
            journal_sql.install(cursor, APP_ROLE)
            floors = retention_floors()
            for name, floor in floors.items():
                _run(cursor, _function_sql(name, floor))
            _run(cursor, _prune_sql(floors))
            sequencer = sql.Identifier(SEQUENCER_ROLE)
            _run(cursor, sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(sequencer))
            _run(cursor, sql.SQL("REVOKE ALL ON coupons_journalleaf FROM {}").format(sequencer))
            # Log positions come only from the sequencer: the application may read them.
            _run(cursor, sql.SQL("REVOKE INSERT ON coupons_journalleaf FROM {}").format(app))
            _run(cursor, sql.SQL("GRANT SELECT ON coupons_journalentry TO {}").format(sequencer))
            # UPDATE only for its LOCK TABLE (operations/db_roles.py's SEQUENCER_LOCK_SQL); the
            # append-only triggers refuse any UPDATE of a position, its owner's included.
            _run(cursor, sql.SQL("GRANT SELECT, INSERT, UPDATE ON coupons_journalleaf TO {}")
                 .format(sequencer))
            # Its stored subtree hashes likewise: the application reads them for proofs.
            _run(cursor, sql.SQL("REVOKE ALL ON coupons_journalnode FROM {}").format(sequencer))
            _run(cursor, sql.SQL("REVOKE INSERT ON coupons_journalnode FROM {}").format(app))
            _run(cursor, sql.SQL("GRANT SELECT, INSERT ON coupons_journalnode TO {}")
                 .format(sequencer))
            _run(cursor, sql.SQL("GRANT USAGE ON SEQUENCE coupons_journalnode_id_seq TO {}")
                 .format(sequencer))
            _run(cursor, _sequencer_sql())
    outbox_partitions_ahead()
    return [*framework, *personal, *UPDATABLE, *UPDATABLE_COLUMNS]

"""The attacks of an owner-login attacker against the database roles and the history triggers
(PostgreSQL).

The application role (coupon_app, which every test here runs as unless it says otherwise)
tries what a stolen app login would: switch triggers off with a SET, TRUNCATE, rewrite an order
binding, delete through the prune functions, change the schema. The owner tries the same where
the triggers, not the grants, are what stops it. Each refusal runs in a savepoint; the row is
read afterwards and must be unchanged.
"""

import os
from decimal import Decimal
from io import StringIO

import pgtrigger
import psycopg
import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.db.models.functions import Now

from coupons.evidence.pruned import outbox_pruned_before
from coupons.evidence.replay import coupon_check
from coupons.models import (
    CouponOperation,
    InboxMessage,
    OrderCoupon,
    OrderFact,
    OutboxEvent,
    PruneRun,
    Redemption,
)
from coupons.models.append_only import PRUNER_ROLE, Unswitchable
from coupons.services import coupon_redeem
from operations.db_roles import APP_PASSWORD_ENV, APP_ROLE, PRUNE_FUNCTION, PRUNE_FUNCTIONS
from operations.retention import retention_prune
from refunds.models import RefundCoupon
from refunds.services.refund_receive import refund_receive
from tests.app_role import as_owner, past_the_triggers
from tests.conftest import lock
from tests.coupons.safety.test_evidence_journal import verify_journal
from tests.db_clock import aged

pytestmark = pytest.mark.django_db

PERMISSION = "permission denied"
TRIGGER = "pgtrigger: Cannot"


def protecting_triggers() -> dict[str, list[str]]:
    """Table → the pgids of its protecting (Unswitchable) triggers, from the models' Meta."""
    tables: dict[str, list[str]] = {}
    for model, trigger in pgtrigger.registered():
        if isinstance(trigger, Unswitchable):
            tables.setdefault(model._meta.db_table, []).append(trigger.get_pgid(model))
    return tables


TABLES = protecting_triggers()
TRUNCATE_REFUSED = sorted(
    table for table, pgids in TABLES.items()
    if any(pgid.startswith("pgtrigger_truncate_refused_") for pgid in pgids)
)


def execute(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else None


def refused(sql: str, params=(), *, setup: str = "") -> str:
    """Runs `setup` then `sql` in a savepoint that must fail; answers the error."""
    with pytest.raises(DatabaseError) as caught, transaction.atomic():
        if setup:
            execute(setup)
        execute(sql, params)
    return str(caught.value)


def ignore_all(table: str) -> str:
    """What the issue's attacker ran: name every trigger of the table in pgtrigger.ignore."""
    return f"SET LOCAL pgtrigger.ignore = '{{{','.join(TABLES[table])}}}'"


@pytest.fixture
def history(coupon, ctx, send):
    """Locked and redeemed (ledger, binding, redemption, outbox rows) and one inbox message."""
    _, proof = lock(coupon, ctx)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P-1", ctx=ctx)
    send("OrderClosed", order_id="order-Z")
    return coupon


def test_the_tests_run_as_the_application_role(db):
    [(user, superuser)] = execute(
        "SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")
    assert (user, superuser) == (APP_ROLE, False)


def test_every_history_table_is_covered():
    assert {
        "coupons_couponoperation", "coupons_commandrejection", "coupons_redemption",
        "coupons_inboxmessage", "coupons_outboxevent", "coupons_ordercoupon",
        "coupons_expirywarning", "coupons_finalpaymentreminder", "coupons_conflictcase",
        "coupons_finding", "coupons_goodwillproposal",
        "refunds_refundcoupon", "refunds_compensation", "refunds_returnpolicyversion",
    } <= set(TRUNCATE_REFUSED)


def test_no_protecting_trigger_function_consults_a_session_setting(db):
    """The switch pgtrigger builds into every trigger function is absent from ours."""
    pgids = [pgid for pgids in TABLES.values() for pgid in pgids]
    sources = dict(execute("SELECT proname, prosrc FROM pg_proc WHERE proname = ANY(%s)",
                           [pgids]))
    assert set(sources) == set(pgids)
    consulting = [name for name, source in sources.items()
                  if "_pgtrigger_should_ignore" in source or "current_setting" in source.lower()]
    assert consulting == []


# --- SET pgtrigger.ignore, then write ----------------------------------------------------

@pytest.mark.parametrize(("model", "column", "value"), [
    (OutboxEvent, "published_at", None),  # published once: never cleared or moved
    (InboxMessage, "outcome", '{"forged": true}'),  # written once: a redelivery's answer
])
def test_the_app_role_cannot_switch_the_triggers_off_for_a_column_it_may_move(
        history, clock, model, column, value):
    OutboxEvent.objects.update(published_at=Now())
    table = model._meta.db_table
    row = model.objects.order_by("-pk").first()
    before = model.objects.filter(pk=row.pk).values().get()

    error = refused(f"UPDATE {table} SET {column} = %s WHERE id = %s", [value, row.pk],
                    setup=ignore_all(table))

    assert TRIGGER in error
    assert model.objects.filter(pk=row.pk).values().get() == before


@pytest.mark.parametrize(("model", "column", "value"), [
    (CouponOperation, "reason", "rewritten"),
    (InboxMessage, "payload", '{"order_id": "o-attacker"}'),
    (OrderCoupon, "order_id", "o-attacker"),
    (Redemption, "payment_id", "p-forged"),
])
def test_set_pgtrigger_ignore_then_update_or_delete_is_refused(history, model, column, value):
    table = model._meta.db_table
    row = model.objects.order_by("-pk").first()
    before = model.objects.filter(pk=row.pk).values().get()

    # The app role: no UPDATE or DELETE grant on these columns at all.
    for sql, params in ((f"UPDATE {table} SET {column} = %s WHERE id = %s", [value, row.pk]),
                        (f"DELETE FROM {table} WHERE id = %s", [row.pk])):
        assert PERMISSION in refused(sql, params, setup=ignore_all(table))
        # The owner holds every grant: the trigger refuses, whatever the session set.
        with as_owner():
            assert TRIGGER in refused(sql, params, setup=ignore_all(table))

    assert model.objects.filter(pk=row.pk).values().get() == before


def app_login():
    """A connection that logs in as the application role, as the server does (the tests'
    own connection only SET ROLE, which a superuser login could undo)."""
    settings = connection.settings_dict
    return psycopg.connect(
        host=settings["HOST"], port=settings["PORT"] or 5432, dbname=settings["NAME"],
        user=APP_ROLE, password=os.environ[APP_PASSWORD_ENV], autocommit=True,
    )


@pytest.mark.parametrize("statement", [
    "SET session_replication_role = replica",
    "SET ROLE postgres",
    f"SET ROLE {PRUNER_ROLE}",
    "SET SESSION AUTHORIZATION postgres",
    "ALTER ROLE coupon_app SUPERUSER",
    "ALTER ROLE coupon_app BYPASSRLS",
])
def test_no_set_lets_the_app_login_become_a_role_that_may_switch_triggers_off(db, statement):
    with app_login() as login:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            login.execute(statement)
        assert login.execute("SELECT current_user, session_user").fetchone() == (
            APP_ROLE, APP_ROLE)
        assert login.execute("SHOW session_replication_role").fetchone() == ("origin",)


# --- TRUNCATE -------------------------------------------------------------------------------

@pytest.mark.parametrize("table", TRUNCATE_REFUSED)
def test_truncate_of_a_history_table_is_refused_to_the_app_and_the_owner(history, table):
    [(rows,)] = execute(f"SELECT count(*) FROM {table}")

    # Django's foreign keys are deferred: fire this transaction's pending checks first, or
    # PostgreSQL refuses the TRUNCATE for them before any trigger runs.
    pending_checks_done = "SET CONSTRAINTS ALL IMMEDIATE"
    assert PERMISSION in refused(f"TRUNCATE {table} CASCADE", setup=pending_checks_done)
    with as_owner():
        assert "Cannot truncate" in refused(f"TRUNCATE {table} CASCADE",
                                            setup=pending_checks_done)

    assert execute(f"SELECT count(*) FROM {table}") == [(rows,)]


# --- evidence the application only ever adds to --------------------------------------------

# What the services insert and never move: no UPDATE or DELETE grant, named here one by one
# (not derived from operations/db_roles.py, whose lists are what this checks).
INSERT_ONLY = [
    "coupons_couponoperation", "coupons_commandrejection", "coupons_ordercoupon",
    "coupons_expirywarning", "coupons_finalpaymentreminder", "coupons_orderfact",
    "coupons_presalesettlement",
    "coupons_coupontemplateversion", "coupons_ledgercheckpoint", "timeline_staffnote",
    "timeline_viewrecord",
]


@pytest.mark.parametrize("table", INSERT_ONLY)
def test_the_app_role_may_only_read_and_add_to_the_evidence_tables(db, table):
    [grants] = execute(
        # INSERT on the columns, not the table: never on the ids the database hands out.
        "SELECT has_table_privilege(%s, %s, 'SELECT'),"
        " has_any_column_privilege(%s, %s, 'INSERT'),"
        " has_table_privilege(%s, %s, 'UPDATE'), has_table_privilege(%s, %s, 'DELETE'),"
        " has_any_column_privilege(%s, %s, 'UPDATE')", [APP_ROLE, table] * 5)
    assert grants == (True, True, False, False, False)


def test_the_app_role_cannot_rewrite_what_the_order_service_said(history):
    """An order fact decides what later refunds and late payments do to the coupon."""
    fact = OrderFact.objects.get(order_id="order-Z")
    before = OrderFact.objects.filter(pk=fact.pk).values().get()

    assert PERMISSION in refused(
        "UPDATE coupons_orderfact SET order_id = 'o-attacker', payment_id = 'p-forged'"
        " WHERE id = %s", [fact.pk])

    assert OrderFact.objects.filter(pk=fact.pk).values().get() == before


# --- the order binding and decisions once decided -------------------------------------------

def test_an_order_binding_cannot_be_rewritten(history):
    binding = OrderCoupon.objects.get(coupon=history)

    assert PERMISSION in refused(
        "UPDATE coupons_ordercoupon SET order_id = 'o-attacker' WHERE id = %s", [binding.pk])
    with as_owner():
        assert TRIGGER in refused(
            "UPDATE coupons_ordercoupon SET order_id = 'o-attacker' WHERE id = %s",
            [binding.pk])

    assert OrderCoupon.objects.get(pk=binding.pk).order_id == "order-A"


def test_a_decided_refund_cannot_be_rewritten_even_by_the_owner(history, ctx):
    refund_receive(refund_id="R1", order_id="order-A", payment_id="P-1",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=ctx)
    decision = RefundCoupon.objects.get(refund_id="R1")
    assert decision.status == RefundCoupon.Status.EXECUTED

    # The app role may move an open decision (UPDATE is granted): the trigger holds this one.
    error = refused("UPDATE refunds_refundcoupon SET coupon_share = 0 WHERE id = %s",
                    [decision.pk], setup=ignore_all("refunds_refundcoupon"))
    assert TRIGGER in error
    with as_owner():
        assert TRIGGER in refused("DELETE FROM refunds_refundcoupon WHERE id = %s",
                                  [decision.pk])
    assert RefundCoupon.objects.get(pk=decision.pk).coupon_share == decision.coupon_share


# --- prune: its own narrow mechanism ------------------------------------------------------

def test_prune_still_deletes_through_its_function(history, clock):
    published = OutboxEvent.objects.update(published_at=Now())
    aged(OutboxEvent, OutboxEvent.objects.values_list("pk", flat=True), "published_at", days=8)

    run = retention_prune()

    assert published > 0
    assert run.outbox_deleted == published and not OutboxEvent.objects.exists()


def test_a_backdated_publish_does_not_age_an_event_into_prune(history):
    """The attack: the app role may set `published_at` once, so it set it a year back and
    called prune. The database stamps its own clock instead, and prune keeps the events."""
    count = OutboxEvent.objects.count()
    execute("UPDATE coupons_outboxevent SET published_at = now() - interval '1 year'")
    execute("INSERT INTO coupons_outboxevent (event_type, payload, created_at, published_at)"
            " VALUES ('CouponIssued', '{}', now(), now() - interval '1 year')")
    [(oldest,)] = execute(
        "SELECT min(published_at) >= now() FROM coupons_outboxevent")
    assert oldest  # every publish on the database's clock, the inserted one's too

    [(run_id,)] = execute(f"SELECT {PRUNE_FUNCTION}()")

    assert PruneRun.objects.get(pk=run_id).outbox_deleted == 0
    assert OutboxEvent.objects.count() == count + 1


@pytest.mark.parametrize("function", PRUNE_FUNCTIONS)
def test_the_app_role_cannot_choose_a_cutoff(history, clock, function):
    """The functions that take a cutoff are their owner's alone; the app role calls
    coupons_prune(), which takes none."""
    OutboxEvent.objects.update(published_at=Now())
    counts = [model.objects.count() for model in (OutboxEvent, InboxMessage)]

    assert PERMISSION in refused(f"SELECT {function}(now() - interval '1 year')")
    assert PERMISSION in refused(f"SELECT {function}(now() + interval '1 day')")
    # Even to their owner, a cutoff inside the window on the database's clock is refused.
    with as_owner():
        execute(f"SET ROLE {PRUNER_ROLE}")
        assert "retention window" in refused(f"SELECT {function}(now() - interval '1 hour')")
        assert "retention window" in refused(f"SELECT {function}(NULL)")

    assert [model.objects.count() for model in (OutboxEvent, InboxMessage)] == counts


FORGED_RUN = (
    "INSERT INTO coupons_prunerun (ran_at, outbox_before, idempotency_before, inbox_before,"
    " outbox_deleted, idempotency_deleted, inbox_deleted)"
    " VALUES (now(), '2100-01-01', now(), now(), 0, 0, 0)")


def test_the_app_role_cannot_record_a_prune_run(history):
    """The attack: one prune run dated 2100 excused every missing event of every coupon."""
    assert PERMISSION in refused(FORGED_RUN)
    # The owner holds every grant; the trigger lets only the prune function insert.
    with as_owner():
        assert TRIGGER in refused(FORGED_RUN)
    assert not PruneRun.objects.exists()


def test_a_prune_run_forged_past_the_triggers_excuses_nothing_and_reconcile_names_it(
        history, broken_on_purpose):
    """The owner with triggers off deletes a coupon's events and forges a run to cover it."""
    with past_the_triggers():
        OutboxEvent.objects.filter(coupon=history).delete()
        execute(FORGED_RUN)
    forged = PruneRun.objects.get()
    broken_on_purpose.add(history.pk)

    report = coupon_check(history, full=True)
    out = StringIO()
    with pytest.raises(SystemExit) as exit:
        call_command("reconcile", stdout=out)

    assert any("has no outbox event" in problem for problem in report.violations[5])
    assert exit.value.code == 2
    assert f"ignored prune run {forged.pk}: its outbox cutoff 2100-01-01 00:00" in out.getvalue()
    assert verify_journal()[0] == f"coupons.prunerun id={forged.pk}: has no journal entry\n"


def test_a_prune_run_forged_with_an_honest_cutoff_but_no_entry_is_named(history):
    """Past the triggers, a run dated like prune's own: only its missing entry gives it away."""
    with past_the_triggers():
        execute(FORGED_RUN.replace("'2100-01-01'", "now() - interval '30 days'"))
    forged = PruneRun.objects.get()

    out = StringIO()
    with pytest.raises(SystemExit) as exit:
        call_command("reconcile", stdout=out)

    assert exit.value.code == 2
    assert (f"ignored prune run {forged.pk}: it has no journal entry, so prune did not write "
            "it") in out.getvalue()
    assert outbox_pruned_before() is None  # the checks excuse nothing by it
    assert verify_journal()[0] == f"coupons.prunerun id={forged.pk}: has no journal entry\n"


def test_the_app_role_cannot_delete_what_prune_deletes_by_itself(history, clock):
    OutboxEvent.objects.update(published_at=Now())
    for table in ("coupons_outboxevent", "coupons_inboxmessage", "coupons_idempotencyrecord",
                  "coupons_prunerun"):
        assert PERMISSION in refused(f"DELETE FROM {table}")


# --- the schema -----------------------------------------------------------------------------

@pytest.mark.parametrize("statement", [
    "ALTER TABLE coupons_couponoperation DISABLE TRIGGER ALL",
    "ALTER TABLE coupons_couponoperation DISABLE TRIGGER USER",
    "DROP TRIGGER {ledger_trigger} ON coupons_couponoperation",
    "CREATE OR REPLACE FUNCTION {ledger_trigger}() RETURNS trigger LANGUAGE plpgsql"
    " AS $$ BEGIN RETURN NEW; END $$",
    "CREATE TABLE public.coupons_shadow (id int)",
    "CREATE FUNCTION public.coupons_shadow() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE SCHEMA attacker",
    "ALTER FUNCTION coupons_prune_outbox(timestamptz) OWNER TO coupon_app",
])
def test_the_app_role_cannot_change_the_schema(db, statement):
    [ledger_trigger] = [pgid for pgid in TABLES["coupons_couponoperation"]
                        if pgid.startswith("pgtrigger_append_only_")]
    error = refused(statement.format(ledger_trigger=ledger_trigger))
    assert PERMISSION in error or "must be owner" in error


def test_every_trigger_is_still_enabled(db):
    disabled = execute(
        "SELECT tgname FROM pg_trigger WHERE tgname LIKE 'pgtrigger_%%' AND tgenabled <> 'O'")
    assert disabled == []


def test_setup_db_roles_converges_a_stray_grant_is_taken_back(db):
    with as_owner():
        execute(f"GRANT UPDATE, DELETE, TRUNCATE ON coupons_couponoperation TO {APP_ROLE}")
        call_command("setup_db_roles", stdout=StringIO())
    [(update, delete, truncate)] = execute(
        "SELECT has_table_privilege(%s, 'coupons_couponoperation', 'UPDATE'),"
        " has_table_privilege(%s, 'coupons_couponoperation', 'DELETE'),"
        " has_table_privilege(%s, 'coupons_couponoperation', 'TRUNCATE')", [APP_ROLE] * 3)
    assert (update, delete, truncate) == (False, False, False)


def test_the_app_role_cannot_insert_rows_with_ids_of_its_own():
    """Rows with the sequence's next ids would make the inserts that draw them fail: every
    command's refusal record among them (a 500, the refusal unrecorded)."""
    error = refused(
        "INSERT INTO coupons_commandrejection (id, op_type, error_code, message, order_id,"
        " actor, idempotency_key, details, created_at)"
        " SELECT last_value + n, 'LOCK', 'X', '', '', 'attacker', '', '{}', now()"
        " FROM coupons_commandrejection_id_seq, generate_series(1, 5) n")
    assert PERMISSION in error
    # Every table whose id the database hands out: no INSERT on that column.
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT c.relname FROM pg_class c
              JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
              JOIN pg_attribute a ON a.attrelid = c.oid AND a.attidentity <> ''
             WHERE c.relkind IN ('r', 'p')
               AND has_column_privilege(%s, c.oid, a.attname, 'INSERT')""", [APP_ROLE])
        assert cursor.fetchall() == []
    # Drawn from the sequence, the same row goes in (by a declared actor: it is journaled).
    execute("SELECT set_config('coupons.actor', 'test', true)")
    execute("INSERT INTO coupons_commandrejection (op_type, error_code, message, order_id,"
            " actor, idempotency_key, details, created_at)"
            " VALUES ('LOCK', 'X', '', '', 'test', '', '{}', now())")

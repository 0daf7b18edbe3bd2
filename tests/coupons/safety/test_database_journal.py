"""The database writes the journal (coupons/evidence/journal_sql.py): the attacks of a stolen
application login (`coupon_app`, as every test here runs unless it says otherwise) on it.

It cannot write an entry or choose an entry's id; a write of a journaled row must declare its
actor, and an UPDATE a step of its table that may move the columns it moves; the trigger
functions cannot be switched off, replaced or led astray by a search_path; and the rules the
database enforces are the models'.
"""

import hashlib
import json

import psycopg
import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coupons.evidence.journal import canonical, content_text, journaled_models
from coupons.evidence.journal_sql import (
    CANONICAL_FUNCTION,
    JOURNAL_ROLE,
    TRIGGER,
    function_name,
    installed_rules,
    rules,
)
from coupons.models import JournalEntry
from refunds.models import RefundCoupon
from tests.conftest import lock
from tests.coupons.safety.test_database_holds_the_rules import execute, refused
from tests.coupons.safety.test_db_roles import app_login
from tests.refunds.conftest import refund
from tests.refunds.test_refunds_api import pending
from timeline.models import ViewRecord

pytestmark = pytest.mark.django_db

PERMISSION = "permission denied"


def declare(actor="user:mallory", **steps):
    execute("SELECT set_config('coupons.actor', %s, true)", [actor])
    for table, step in steps.items():
        execute("SELECT set_config(%s, %s, true)", [f"coupons.step.{table}", step])


def entries(label, subject_id):
    return list(JournalEntry.objects.filter(subject=label, subject_id=subject_id)
                .order_by("id"))


VIEW = ("INSERT INTO timeline_viewrecord (actor, kind, page, path, coupon_id, created_at) "
        "VALUES ('user:sam', 'VIEW', 'coupon', '/c/1/', 1, now()) RETURNING id")


def test_the_app_login_cannot_write_an_entry(coupon):
    [first] = JournalEntry.objects.order_by("id")[:1]
    content = content_text(coupon.pk, {"actor": "user:mallory", "kind": "recorded"})
    for statement in (
        "INSERT INTO coupons_journalentry (subject, subject_id, kind, actor, parent_hash, "
        "content, content_hash, created_at) VALUES ('coupons.couponoperation', -1, "
        f"'recorded', 'user:mallory', NULL, '{content}', "
        f"'{hashlib.sha256(content.encode()).hexdigest()}', now())",
        f"UPDATE coupons_journalentry SET actor = 'user:mallory' WHERE id = {first.pk}",
        f"DELETE FROM coupons_journalentry WHERE id = {first.pk}",
        "INSERT INTO coupons_journalleaf (index, entry_id, leaf_hash, sequenced_at) "
        f"VALUES (999999, {first.pk}, 'x', now())",
        "INSERT INTO coupons_journalnode (level, position, hash) VALUES (9, 9, 'x')",
    ):
        assert PERMISSION in refused(statement)


def test_squatting_the_next_entry_ids_is_refused_and_commands_still_answer(api, template):
    for statement in (
        "INSERT INTO coupons_journalentry (id, subject, subject_id, kind, actor, content, "
        "content_hash, created_at) SELECT last_value + n, 'x', n, 'recorded', 'm', 'c' || n, "
        "'h' || n, now() FROM coupons_journalentry_id_seq, generate_series(1, 5) n",
        "SELECT setval('coupons_journalentry_id_seq', "
        "(SELECT last_value + 5 FROM coupons_journalentry_id_seq))",
        "SELECT nextval('coupons_journalentry_id_seq')",
    ):
        assert PERMISSION in refused(statement)

    issued = [api.post("/api/v1/coupons", {"template_id": template.pk, "user_id": "u1"},
                       format="json", HTTP_IDEMPOTENCY_KEY=f"issue-{n}") for n in range(3)]
    order = {"order_id": "A", "user_id": "u1", "order_amount": "300.00"}
    coupon_id = issued[0].json()["id"]
    locked = [api.post(f"/api/v1/coupons/{coupon_id}/lock", order, format="json",
                       HTTP_IDEMPOTENCY_KEY=f"lock-{n}") for n in range(2)]
    # The second lock is refused (the coupon is taken): a 409, recorded with its entry.
    assert [answer.status_code for answer in issued + locked] == [201, 201, 201, 200, 409]


def test_a_row_written_without_a_declared_actor_is_refused(db):
    assert "declares no actor" in refused(VIEW)

    declare("user:sam")
    [(view_id,)] = execute(VIEW)
    [entry] = entries("timeline.viewrecord", view_id)
    assert (entry.kind, entry.actor, entry.parent_hash) == ("recorded", "user:sam", None)


def test_the_entry_is_the_row_as_stored_on_the_database_clock(db):
    declare("user:sam")
    [(view_id,)] = execute(VIEW)
    [(now,)] = execute("SELECT now()")

    [entry] = entries("timeline.viewrecord", view_id)
    content = json.loads(entry.content)
    assert entry.content_hash == hashlib.sha256(entry.content.encode()).hexdigest()
    assert entry.content == content_text(content.pop("id"), content)
    assert entry.created_at == now
    assert content["row"] == {"actor": "user:sam", "coupon_id": 1, "created_at": content["at"],
                              "kind": "VIEW", "page": "coupon", "path": "/c/1/"}


def test_an_approval_that_moves_the_action_is_refused(coupon, ctx):
    """The journal's own rule, on a decision no other guard holds yet: one waiting for its
    redemption, whose action the decide step may still set (granted, not frozen)."""
    lock(coupon, ctx, order_id="order-A")
    [decision] = refund(ctx, "r-early").decisions
    assert decision.status == RefundCoupon.Status.AWAITING_REDEMPTION
    tips = entries("refunds.refundcoupon", decision.pk)
    update = "UPDATE refunds_refundcoupon SET action = 'RETURN' WHERE id = %s"

    # The services' last step is still declared in this (the test's) transaction: clear it.
    declare(refunds_refundcoupon="")
    assert '"" is no step' in refused(update, [decision.pk])
    declare(refunds_refundcoupon="approved")
    assert "approved step may not move action" in refused(update, [decision.pk])
    declare(refunds_refundcoupon="sealed")
    assert '"sealed" is no step' in refused(update, [decision.pk])

    assert RefundCoupon.objects.get(pk=decision.pk).action == decision.action
    assert entries("refunds.refundcoupon", decision.pk) == tips


def test_a_pending_decision_s_action_is_refused_before_the_journal_is_asked(coupon, ctx):
    """The second way in: once pending, the row's own trigger refuses the move whatever step
    is declared, so no entry could record it."""
    decision = pending(coupon, ctx)
    declare(refunds_refundcoupon="recommended")
    assert "pgtrigger: Cannot update" in refused(
        "UPDATE refunds_refundcoupon SET action = 'RETURN' WHERE id = %s", [decision.pk])


def test_a_move_outside_the_evidence_writes_no_entry(coupon, ctx):
    """An UPDATE that moves no journaled column (here: none at all) needs no step."""
    decision = pending(coupon, ctx)
    before = entries("refunds.refundcoupon", decision.pk)

    execute("UPDATE refunds_refundcoupon SET status = status WHERE id = %s", [decision.pk])

    assert entries("refunds.refundcoupon", decision.pk) == before


@pytest.mark.parametrize("statement", [
    "ALTER TABLE timeline_viewrecord DISABLE TRIGGER {trigger}",
    "ALTER TABLE timeline_viewrecord DISABLE TRIGGER ALL",
    "DROP TRIGGER {trigger} ON timeline_viewrecord",
    "DROP FUNCTION public.{function}() CASCADE",
    "CREATE OR REPLACE FUNCTION public.{function}() RETURNS trigger LANGUAGE plpgsql "
    "AS $$ BEGIN RETURN NULL; END $$",
    "CREATE OR REPLACE FUNCTION public.{canonical}(value jsonb) RETURNS text LANGUAGE sql "
    "AS $$ SELECT 'x' $$",
    "ALTER FUNCTION public.{function}() OWNER TO coupon_app",
])
def test_the_app_login_cannot_switch_off_or_replace_the_journal_triggers(db, statement):
    error = refused(statement.format(trigger=TRIGGER, function=function_name(ViewRecord),
                                     canonical=CANONICAL_FUNCTION))

    assert PERMISSION in error or "must be owner" in error


def test_the_app_login_cannot_become_the_journal_role(db):
    with app_login() as login, pytest.raises(psycopg.errors.InsufficientPrivilege):
        login.execute(f"SET ROLE {JOURNAL_ROLE}")


def test_a_temporary_table_named_like_the_journal_does_not_take_its_entries(db):
    """The classic way into a SECURITY DEFINER function: objects of the caller's that an
    unqualified name would find first. Ours name public.* and search pg_temp last."""
    execute("CREATE TEMP TABLE coupons_journalentry (LIKE public.coupons_journalentry)")
    execute("CREATE FUNCTION pg_temp.sha256(bytea) RETURNS bytea LANGUAGE sql "
            "AS $$ SELECT '\\x00'::bytea $$")
    execute("SET LOCAL search_path = pg_temp, public")
    declare("user:sam")

    [(view_id,)] = execute(VIEW)

    assert execute("SELECT count(*) FROM pg_temp.coupons_journalentry") == [(0,)]
    execute("DROP TABLE pg_temp.coupons_journalentry")
    execute("SET LOCAL search_path = public")
    [entry] = entries("timeline.viewrecord", view_id)
    assert entry.content_hash == hashlib.sha256(entry.content.encode()).hexdigest()


def test_every_trigger_function_is_a_definer_of_the_journal_role_with_a_fixed_path(db):
    found = execute(
        "SELECT p.proname, p.prosecdef, pg_get_userbyid(p.proowner), p.proconfig "
        "FROM pg_proc p WHERE p.proname = ANY(%s) ORDER BY 1",
        [[function_name(model) for model in journaled_models()]])
    assert found == sorted(
        (function_name(model), True, JOURNAL_ROLE, ["search_path=pg_catalog, pg_temp"])
        for model in journaled_models())
    triggers = execute(f"SELECT count(*) FROM pg_trigger WHERE tgname = '{TRIGGER}' "
                       "AND tgenabled = 'O'")
    assert triggers == [(len(journaled_models()),)]


def test_the_rules_the_database_enforces_are_the_models(db):
    installed = installed_rules(connection.cursor())

    assert installed == {model._meta.label_lower: rules(model) for model in journaled_models()}
    assert installed["refunds.refundcoupon"]["steps"]["approved"] == sorted(
        RefundCoupon.JOURNAL_STEP_MOVES["approved"])
    assert "action" not in installed["refunds.refundcoupon"]["steps"]["approved"]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**15, 10**15)
    | st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)),
                max_size=6), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(value=JSON)
def test_the_database_writes_the_same_canonical_json_as_python(db, value):
    [(text,)] = execute(f"SELECT public.{CANONICAL_FUNCTION}(%s::jsonb)", [json.dumps(value)])

    assert text == canonical(value)


def test_canonical_json_agrees_on_awkward_strings(db):
    value = {"é": "\"quoted\" \\ back\nline\ttab\x01\x1f\x7f \u2028 😀", "Z": [1, None, True],
             "a": {"b": "", "B": 0}, "\u00e9\u0301": "combining"}

    [(text,)] = execute(f"SELECT public.{CANONICAL_FUNCTION}(%s::jsonb)", [json.dumps(value)])

    assert text == canonical(value)

"""Prepared statements on PostgreSQL: server-side binding, psycopg's automatic
prepare, and DATABASE_PREPARED_STATEMENTS=0 for PgBouncer in transaction mode."""

import json
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from common.postgresql.base import numbered
from coupons.services import CommandContext, coupon_lock, coupon_release
from coupons.write.context import LeaseProof
from tests.api.test_production_defaults import PRODUCTION_ENV, manage

POSTGRES_URL = "postgres://coupons@db.example.com:5432/coupons"
SHOW_OPTIONS = ("from django.conf import settings; import json; o = settings.DATABASES"
                "['default'].get('OPTIONS', {}); print(json.dumps([o.get('server_side_binding'),"
                " o.get('prepare_threshold')]))")


def binding_options(**env) -> list:
    shown = manage("shell", "-v0", "-c", SHOW_OPTIONS,
                   env={**PRODUCTION_ENV, "DATABASE_URL": POSTGRES_URL, **env})
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def test_prepared_statements_are_on_by_default_and_off_with_zero():
    assert binding_options() == [True, 5]
    assert binding_options(DATABASE_PREPARED_STATEMENTS="0") == [False, None]


@pytest.mark.django_db
def test_a_connection_prepares_the_commands_statements(coupon, clock):
    def prepared() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            return cursor.fetchone()[0]

    before = prepared()
    ctx = CommandContext(actor="client:order-service")
    for order in range(6):
        clock.advance(seconds=1)
        result = coupon_lock(coupon_id=coupon.pk, order_id=f"order-{order}", user_id="u1",
                             order_amount=Decimal("300.00"), ctx=ctx)
        coupon_release(coupon_id=coupon.pk, ctx=ctx, lease=LeaseProof.from_lock(
            result.lock, expected_version=result.state_version))

    assert connection.connection.prepare_threshold is not None
    assert prepared() > before
    # The one write of each command too, LOCK's with more than 50 parameters, which psycopg
    # would number again at each execute (common.postgresql's numbered_cursor numbers it once).
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements "
                       "WHERE statement LIKE 'WITH declared AS (SELECT%%'")
        written = [statement for (statement,) in cursor.fetchall()]
    assert len(written) == 2  # LOCK's and RELEASE's
    assert any("$51" in statement for statement in written)


@pytest.mark.django_db
def test_the_numbered_cursor_runs_a_percent_s_statement_and_logs_it_as_given():
    sql = "SELECT %s::int + %s::int, '100%%', %s::text"

    with CaptureQueriesContext(connection) as ran, connection.numbered_cursor() as cursor:
        cursor.execute(sql, [1, 2, "x"])
        row = cursor.fetchone()

    assert row == (3, "100%", "x")
    assert numbered(sql) == "SELECT $1::int + $2::int, '100%', $3::text"
    assert [query["sql"] for query in ran] == ["SELECT 1::int + 2::int, '100%', 'x'::text"]

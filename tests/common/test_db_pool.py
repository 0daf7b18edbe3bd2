"""Pooled PostgreSQL connections, sized from DB_POOL_MAX_SIZE."""

import json
import threading

import pytest
from django.db import connection, connections

from tests.api.test_production_defaults import PRODUCTION_ENV, manage

POSTGRES_URL = "postgres://coupons@db.example.com:5432/coupons"
SHOW_POOL = ("from django.conf import settings; import json; "
             "print(json.dumps(settings.DATABASES['default'].get('OPTIONS', {}).get('pool')))")


def pool_settings(**env) -> dict | None:
    """The pool options the settings build from `env` (no database is contacted)."""
    shown = manage("shell", "-v0", "-c", SHOW_POOL, env={**PRODUCTION_ENV, **env})
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def test_the_pool_is_sized_from_the_environment_on_postgresql():
    pool = pool_settings(DATABASE_URL=POSTGRES_URL, DB_POOL_MAX_SIZE="7", DB_POOL_MIN_SIZE="3",
                         DB_POOL_TIMEOUT_SECONDS="4")

    assert {k: pool[k] for k in ("min_size", "max_size", "timeout")} == {
        "min_size": 3, "max_size": 7, "timeout": 4}


def test_the_pool_has_defaults_and_turns_off_with_zero():
    assert pool_settings(DATABASE_URL=POSTGRES_URL)["max_size"] == 10
    assert pool_settings(DATABASE_URL=POSTGRES_URL, DB_POOL_MAX_SIZE="0") is None


@pytest.mark.django_db(transaction=True)
def test_threads_borrow_pooled_connections_and_give_them_back():
    assert connection.pool is not None
    connection.ensure_connection()  # opens the pool with its min_size connections
    connection.pool.wait()  # ...which arrive in the background: all of them before counting
    opened_before = connection.pool.get_stats()["connections_num"]
    assert opened_before >= 1
    backend_pids = []

    def one_request():
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend_pids.append(cursor.fetchone()[0])
        # What Django does at the end of every request: the connection goes back to the pool.
        connections.close_all()

    for _ in range(5):
        thread = threading.Thread(target=one_request)
        thread.start()
        thread.join()

    # One after the other, the five "requests" reused the pool's open connections: not one
    # of them connected to the server.
    assert len(backend_pids) == 5
    assert connection.pool.get_stats()["connections_num"] == opened_before

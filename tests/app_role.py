"""The tests run as the application role, as the server does (docs/evidence.md).

pytest-django creates and migrates the test database as the owner (DATABASE_URL's user); then
`setup_db_roles` runs once per session and every connection Django opens from then on, the
race tests' threads included, starts with `SET ROLE coupon_app`: each statement a test makes
is checked against that role's grants and the history triggers. Two things still need the
owner and say so:

- a test marked `owner_role` (an attacker holding the owner's login, a write past the
  triggers with session_replication_role): it runs with the role reset, and `as_owner()`
  does the same for a block;
- the flush after a transactional test (django_db(transaction=True)) empties every table
  with TRUNCATE, which history tables refuse to everyone: it runs as the owner with triggers
  off (session_replication_role = replica), as only a superuser may.
"""

from contextlib import contextmanager, suppress
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.signals import connection_created
from django.test import TransactionTestCase

from operations.db_roles import APP_ROLE


def _start_as_app_role(sender, connection, **kwargs):
    if connection.alias != NO_DB_ALIAS:  # creating and dropping test databases: the owner
        with connection.cursor() as cursor:
            cursor.execute(f"SET ROLE {APP_ROLE}")


def _execute(sql: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql)


@contextmanager
def as_owner():
    """The block runs as the owner (the connection's login), then as the app role again."""
    _execute("RESET ROLE")
    try:
        yield
    finally:
        # In a failed transaction this cannot run; rolling it back restores the role anyway.
        with suppress(DatabaseError):
            _execute(f"SET ROLE {APP_ROLE}")


@contextmanager
def past_the_triggers():
    """A write as a superuser gets past every trigger: the owner's login with
    session_replication_role = replica."""
    with as_owner():
        _execute("SET session_replication_role = replica")
        try:
            yield
        finally:
            with suppress(DatabaseError):
                _execute("SET session_replication_role = origin")


def _flush_as_owner(flush):
    def _fixture_teardown(self):
        _execute("RESET ROLE")
        _execute("SET session_replication_role = replica")
        try:
            flush(self)
        finally:
            _execute("SET session_replication_role = origin")
            _execute(f"SET ROLE {APP_ROLE}")

    return _fixture_teardown


@pytest.fixture(scope="session", autouse=True)
def app_role_session(request, django_db_blocker):
    request.getfixturevalue("django_db_setup")
    with django_db_blocker.unblock():
        # pytest-django sets up only the databases the collected tests ask for: none for a
        # run of database-free tests, and then there is nothing to grant.
        if "django_migrations" not in connection.introspection.table_names():
            connection.close()
            yield
            return
        call_command("setup_db_roles", stdout=StringIO())
        connection.close()
    connection_created.connect(_start_as_app_role)
    flush = TransactionTestCase._fixture_teardown
    TransactionTestCase._fixture_teardown = _flush_as_owner(flush)
    yield
    TransactionTestCase._fixture_teardown = flush
    connection_created.disconnect(_start_as_app_role)
    with django_db_blocker.unblock():
        connection.close()
        if hasattr(connection, "close_pool"):
            connection.close_pool()  # its connections were SET ROLE: the drop needs the owner


@pytest.fixture(autouse=True)
def owner_role(request):
    """Tests marked `owner_role` act as the owner (the attacker with its login)."""
    if not request.node.get_closest_marker("owner_role"):
        yield
        return
    request.getfixturevalue("db")
    with as_owner():
        yield

"""The server refuses to log in to PostgreSQL as a role that can switch the
history triggers off (a superuser, the tables' owner or a member of it): config.E003.

Before: a server whose DATABASE_URL was the owner started, and every protection of the two
roles (docs/evidence.md) was void. Tests log in as the superuser and SET ROLE coupon_app
(tests/app_role.py): the check reads the login (session_user), so that login is refused here.
"""

import os
import subprocess
import sys
import uuid
from urllib.parse import quote

import pytest
from django.core import checks
from django.db import connection, connections

from common.checks import ALLOW_OWNER_LOGIN_ENV, check_database_login, login_powers
from operations.db_roles import APP_PASSWORD_ENV, APP_ROLE
from tests.api.test_production_defaults import PRODUCTION_ENV, ROOT

APP_ALIAS = "app_login"


def ids(messages) -> list[str]:
    return [message.id for message in messages]


@pytest.fixture
def app_login_alias(django_db_setup, django_db_blocker):
    """A Django connection that logs in to the test database as coupon_app, as the server
    does (its own login, not the tests' SET ROLE). Outside a test case: Django's test case
    allows only the databases it was declared with, and this one is made here."""
    settings_dict = {**connection.settings_dict, "USER": APP_ROLE,
                     "PASSWORD": os.environ[APP_PASSWORD_ENV], "OPTIONS": {}}
    connections.settings[APP_ALIAS] = settings_dict
    with django_db_blocker.unblock():
        yield APP_ALIAS
        connections[APP_ALIAS].close()
    del connections[APP_ALIAS]
    del connections.settings[APP_ALIAS]


@pytest.mark.django_db
def test_a_superuser_login_is_refused_even_after_set_role():
    with connection.cursor() as cursor:
        cursor.execute("SELECT session_user, current_user")
        assert cursor.fetchone() == ("postgres", APP_ROLE)

    [error] = check_database_login(databases=["default"])

    assert error.id == "config.E003" and error.is_serious()
    assert "logs in to PostgreSQL ('default') as postgres, which is a superuser" in error.msg
    assert "MIGRATION_DATABASE_URL to the owner's login" in error.hint
    assert f"DATABASE_URL to {APP_ROLE}'s" in error.hint
    assert "'Database roles'" in error.hint


def test_the_app_role_login_passes(app_login_alias):
    with connections[app_login_alias].cursor() as cursor:
        assert login_powers(cursor) == (APP_ROLE, [])

    assert check_database_login(databases=[app_login_alias]) == []


@pytest.mark.django_db
@pytest.mark.owner_role
def test_an_owner_that_is_no_superuser_and_its_members_are_refused():
    """Roles made inside the test's transaction, rolled back with it."""
    owner, member, admin = (f"h_serve_{name}_{uuid.uuid4().hex[:8]}"
                            for name in ("owner", "member", "admin"))
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {owner} NOLOGIN NOSUPERUSER")
        cursor.execute("CREATE TABLE h_serve_probe (id int)")
        cursor.execute(f"ALTER TABLE h_serve_probe OWNER TO {owner}")
        cursor.execute(f"CREATE ROLE {member} LOGIN NOSUPERUSER IN ROLE {owner}")
        cursor.execute(f"CREATE ROLE {admin} LOGIN NOSUPERUSER IN ROLE postgres")

        assert login_powers(cursor, owner) == (owner, ["owns the tables"])
        assert login_powers(cursor, member) == (
            member, [f"is a member of their owner {owner}"])
        # postgres owns the other tables, and may switch off anything as a superuser.
        assert login_powers(cursor, admin)[1] == [
            "is a member of their owner postgres",
            "is a member of the superuser role postgres",
        ]
        assert login_powers(cursor, APP_ROLE) == (APP_ROLE, [])


@pytest.mark.django_db
@pytest.mark.parametrize("opt_out", [ALLOW_OWNER_LOGIN_ENV, "COUPONS_DEMO"])
def test_the_demo_and_a_developer_may_opt_out_explicitly(monkeypatch, opt_out):
    monkeypatch.setenv(opt_out, "1")

    assert check_database_login(databases=["default"]) == []


@pytest.mark.django_db
def test_it_runs_only_with_deploy_and_a_database():
    """`migrate` runs the database checks as the owner, `runserver` and `check` none of them:
    neither may be refused. `check --deploy --database default` runs it."""
    migrate_runs = checks.run_checks(databases=["default"])
    plain_check_runs = checks.run_checks(include_deployment_checks=True)
    deploy_with_database = checks.run_checks(
        tags=["database_login"], include_deployment_checks=True, databases=["default"])

    assert "config.E003" not in ids(migrate_runs) + ids(plain_check_runs)
    assert ids(deploy_with_database) == ["config.E003"]


def test_the_wsgi_application_gunicorn_loads_refuses_the_superuser_login(django_db_setup):
    """gunicorn runs no system checks; loading config.wsgi does (through bin/serve:
    tests/deploy/test_serve_roles.py)."""
    database = connection.settings_dict
    url = "postgres://{user}{password}@{host}:{port}/{name}"

    def load_wsgi(user, password=""):
        return subprocess.run([sys.executable, "-c", "import config.wsgi"], cwd=ROOT, env={
            "PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "config.settings",
            **PRODUCTION_ENV, "DATABASE_URL": url.format(
                user=user, password=password and f":{password}",
                host=quote(database["HOST"], safe=""),
                port=database["PORT"] or 5432, name=database["NAME"]),
        }, capture_output=True, text=True, timeout=120)

    refused = load_wsgi(database["USER"])
    served = load_wsgi(APP_ROLE, os.environ[APP_PASSWORD_ENV])

    assert refused.returncode != 0
    assert "ImproperlyConfigured" in refused.stderr and "config.E003" in refused.stderr
    assert "Set MIGRATION_DATABASE_URL" in refused.stderr
    assert served.returncode == 0, served.stderr

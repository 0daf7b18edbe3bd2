"""Start-up checks: `manage.py check` and every server start.

- The secrets: a public demo secret or a short one lets anyone forge
  sessions or lease tokens, so both are errors (config.E001, config.E002) unless
  COUPONS_DEMO=1, which only bin/run-demo sets.
- The database login: a server that logs in to PostgreSQL as a superuser or
  as the owner of the tables (or a member of it) can switch off every trigger and rewrite
  history, so the two roles of docs/evidence.md would protect nothing (config.E003).
- The middleware Django's and axes' own checks look for by name (config.W004-W006): see
  "Middleware found by class" below.

gunicorn runs no system checks: config/wsgi.py calls both `refuse_to_start_*` functions.
"""

import os

from axes.middleware import AxesMiddleware
from django.conf import settings
from django.core import checks
from django.core.checks.security import csrf
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, connections
from django.middleware.csrf import CsrfViewMiddleware
from django.utils.module_loading import import_string

from common.roles import APP_ROLE

# Every setting that holds a secret, in one place: a string, or a dict / list of them
# (LEASE_TOKEN_SECRETS). A new secret is one line here. Empty values (an optional secret left
# unset, METRICS_TOKEN) are not checked.
SECRET_SETTINGS = (
    "SECRET_KEY",
    "LEASE_TOKEN_SECRETS",
    "IDEMPOTENCY_SEAL_SECRET",
    "METRICS_TOKEN",
    "LEDGER_SIGNING_KEY",
)
MIN_SECRET_BYTES = 32

# The demo's secrets are public (bin/run-demo, the README): refused everywhere but the demo.
# tests/common/hardening/test_secret_checks.py checks that every secret bin/run-demo exports is
# here.
DEMO_SECRETS = frozenset({
    "demo-only-secret-key-public-never-use-in-production",
    "demo-only-lease-token-secret-public-never-use",
    "demo-only-idempotency-seal-secret-public-never-use",
    "ZGVtby1vbmx5LWxlZGdlci1zaWduaW5nLWtleS0zMmI=",  # the demo's checkpoint signing key
})
TAG = "secrets"


def secret_values(value) -> list[str]:
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return [item for entry in value for item in secret_values(entry)]
    return [value] if isinstance(value, str | bytes) and value else []


def is_demo() -> bool:
    return os.environ.get("COUPONS_DEMO", "") == "1"


@checks.register(TAG)
def check_secrets(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    errors = []
    for name in SECRET_SETTINGS:
        for secret in secret_values(getattr(settings, name, None)):
            raw = secret.encode() if isinstance(secret, str) else secret
            if secret in DEMO_SECRETS and not is_demo():
                errors.append(checks.Error(
                    f"{name} is one of the public demo secrets.",
                    hint="The demo's secrets are published with the code; set a long random "
                         "value of your own (docs/deploy.md, 'Production settings').",
                    id="config.E001",
                ))
            elif len(raw) < MIN_SECRET_BYTES:
                errors.append(checks.Error(
                    f"{name} is {len(raw)} bytes long; a secret needs at least "
                    f"{MIN_SECRET_BYTES}.",
                    hint="A short secret can be guessed; e.g. python3 -c 'import secrets; "
                         "print(secrets.token_urlsafe(48))'.",
                    id="config.E002",
                ))
    return errors


def refuse_to_start_on_weak_secrets() -> None:
    errors = checks.run_checks(tags=[TAG])
    if errors:
        raise ImproperlyConfigured("\n".join(str(error) for error in errors))


# --- The database login -----------------------------------------------------------------------

DATABASE_LOGIN_TAG = "database_login"
# A single-user developer's box on PostgreSQL may serve as the owner on purpose; the demo
# (COUPONS_DEMO=1) too. Never a default: production has neither.
ALLOW_OWNER_LOGIN_ENV = "ALLOW_DB_OWNER_LOGIN"

# The login (session_user, not current_user: a superuser that SET ROLE can RESET it) and what
# lets it past the triggers: superuser; owner of a table in our schemas, or a member of an
# owner (pg_has_role MEMBER: SET ROLE to it is open); a member of a superuser role.
LOGIN_POWERS_SQL = """
    SELECT login.rolname, login.rolsuper,
           ARRAY(SELECT DISTINCT t.tableowner::text FROM pg_tables t
                 WHERE t.schemaname = ANY (current_schemas(false))
                   AND pg_has_role(login.oid, t.tableowner, 'MEMBER')
                 ORDER BY 1),
           ARRAY(SELECT s.rolname::text FROM pg_roles s
                 WHERE s.rolsuper AND s.oid <> login.oid
                   AND pg_has_role(login.oid, s.oid, 'MEMBER')
                 ORDER BY 1)
    FROM pg_roles login WHERE login.rolname = %s
"""


def login_powers(cursor, login: str | None = None) -> tuple[str, list[str]]:
    """The login (default: this session's) and what lets it past the history triggers, one
    phrase each: none for a role like coupon_app. `cursor` is Django's or psycopg's."""
    if login is None:
        cursor.execute("SELECT session_user")
        login = cursor.fetchone()[0]
    cursor.execute(LOGIN_POWERS_SQL, [login])
    _, superuser, owners, superuser_roles = cursor.fetchone()
    if superuser:
        return login, ["is a superuser"]
    powers = []
    if login in owners:
        powers.append("owns the tables")
    if member_of := [owner for owner in owners if owner != login]:
        powers.append(f"is a member of their owner {', '.join(member_of)}")
    if superuser_roles:
        powers.append(f"is a member of the superuser role {', '.join(superuser_roles)}")
    return login, powers


def owner_login_allowed() -> bool:
    return os.environ.get(ALLOW_OWNER_LOGIN_ENV, "") == "1" or is_demo()


# `database`: runs only with `check --database default` (it needs the database); deploy: only
# with --deploy, so `migrate`, which runs the database checks as the owner, is not refused.
@checks.register(DATABASE_LOGIN_TAG, checks.Tags.database, deploy=True)
def check_database_login(app_configs=None, databases=None, **kwargs) -> list[checks.CheckMessage]:
    if not databases or owner_login_allowed():
        return []
    messages = []
    for alias in databases:
        connection = connections[alias]
        try:
            with connection.cursor() as cursor:
                login, powers = login_powers(cursor)
        except DatabaseError as error:
            # Not a refusal: gunicorn stops the whole server when a worker fails to boot, so a
            # worker it restarts during a database outage would take the server down with it.
            messages.append(checks.Warning(
                f"Could not check the database login of {alias!r}: {error}",
                id="config.W003",
            ))
            continue
        if powers:
            messages.append(checks.Error(
                f"The server logs in to PostgreSQL ({alias!r}) as {login}, which "
                f"{' and '.join(powers)}: it can switch off the history triggers, so the "
                f"database roles protect nothing.",
                hint=f"Set MIGRATION_DATABASE_URL to the owner's login and DATABASE_URL to "
                     f"{APP_ROLE}'s (docs/evidence.md, 'Database roles'); bin/serve migrates and "
                     f"runs "
                     f"setup_db_roles as the owner, then serves as {APP_ROLE}.",
                id="config.E003",
            ))
    return messages


def refuse_to_start_as_database_owner() -> None:
    """For gunicorn (config/wsgi.py): the check above on the default database."""
    try:
        errors = [message for message in checks.run_checks(
            tags=[DATABASE_LOGIN_TAG], include_deployment_checks=True, databases=["default"])
            if message.is_serious()]
    finally:
        connections["default"].close()  # the worker's main thread serves no request
    if errors:
        raise ImproperlyConfigured("\n".join(str(error) for error in errors))


# --- Middleware found by class ----------------------------------------------------------------

# common.console_only subclasses Django's CSRF middleware and axes' so that a service client's
# token request passes them by. Django's deploy check and axes look for those classes by their
# dotted name in MIDDLEWARE and miss the subclasses: their "missing" warnings (security.W003,
# axes.W002) would always fire, so settings silence them, and Django's insecure CSRF cookie
# warning (security.W016) applies only once it finds the middleware, so it never fired. These
# checks find the middleware by class, and say what Django and axes say, under our own ids.
STANDS_FOR = "(Django's own check, {django_id}, looks for the class by name and misses the " \
             "subclass in common/console_only.py.)"


def has_middleware(base: type) -> bool:
    """Whether MIDDLEWARE holds `base` or a subclass of it."""
    return any(issubclass(import_string(path), base) for path in settings.MIDDLEWARE)


@checks.register(checks.Tags.security, deploy=True)
def check_csrf_by_class(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    if not has_middleware(CsrfViewMiddleware):
        return [checks.Warning(
            "No middleware in MIDDLEWARE is django.middleware.csrf.CsrfViewMiddleware or a "
            "subclass of it: no form or session call to the API is protected against "
            "cross-site request forgery.",
            hint=STANDS_FOR.format(django_id=csrf.W003.id), id="config.W004")]
    if not (settings.CSRF_USE_SESSIONS or settings.CSRF_COOKIE_SECURE is True):
        return [checks.Warning(csrf.W016.msg, hint=STANDS_FOR.format(django_id=csrf.W016.id),
                               id="config.W005")]
    return []


@checks.register(checks.Tags.security)
def check_axes_by_class(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    if has_middleware(AxesMiddleware):
        return []
    return [checks.Warning(
        "No middleware in MIDDLEWARE is axes.middleware.AxesMiddleware or a subclass of it: a "
        "locked-out sign-in is not answered as locked out.",
        hint=STANDS_FOR.format(django_id="axes.W002"), id="config.W006")]

"""Load-balancer probes: /healthz and /readyz, without auth, over plain HTTP."""

import pytest
from django.db import OperationalError, connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import Client, override_settings

from common.health import unapplied_migrations

# A production server's guards: HTTPS redirect on, one public host name. The balancer probes
# by address over plain HTTP, so the probes must answer in spite of both.
PRODUCTION_GUARDS = override_settings(
    SECURE_SSL_REDIRECT=True, ALLOWED_HOSTS=["coupons.example.com"], DEBUG=False,
)
PROBE_HOST = "10.0.0.7"
NOT_READY = {"error": {"code": "SERVICE_UNAVAILABLE", "message": "Not ready to serve requests.",
                       "details": {"retry_after": 5}}}


def probe(path):
    return Client().get(path, HTTP_HOST=PROBE_HOST)


@PRODUCTION_GUARDS
def test_healthz_answers_without_auth_over_plain_http_to_any_host():
    response = probe("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"


@PRODUCTION_GUARDS
def test_other_paths_keep_the_host_check_and_the_https_redirect():
    """The probes' exemption is theirs alone: the same request elsewhere is refused."""
    assert probe("/").status_code == 400  # DisallowedHost
    assert Client().get("/", HTTP_HOST="coupons.example.com").status_code == 301


@pytest.mark.django_db
@PRODUCTION_GUARDS
def test_readyz_is_ok_with_the_database_up_and_every_migration_applied():
    assert unapplied_migrations() == 0

    response = probe("/readyz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
@PRODUCTION_GUARDS
def test_readyz_is_503_while_a_migration_is_unapplied():
    # The database forgets one migration (rolled back after the test): a deploy whose
    # `migrate` has not run yet.
    MigrationRecorder(connection).migration_qs.filter(app="coupons").order_by("-id")[0].delete()
    assert unapplied_migrations() == 1

    response = probe("/readyz")

    assert response.status_code == 503
    assert response.json() == NOT_READY
    assert response["Retry-After"] == "5"


@pytest.mark.django_db
@PRODUCTION_GUARDS
def test_readyz_is_503_without_details_when_the_database_cannot_be_reached(monkeypatch):
    def unreachable():
        raise OperationalError(
            'connection to server at "db-7.internal" (10.1.2.3), port 5432 failed: '
            'FATAL: password authentication failed for user "coupons"'
        )

    with monkeypatch.context() as patched:
        patched.setattr(connection, "cursor", unreachable)
        response = probe("/readyz")

    assert response.status_code == 503
    assert response.json() == NOT_READY
    body = response.content.decode()
    for leak in ("db-7", "10.1.2.3", "5432", "coupons", "postgres", "Django", "FATAL"):
        assert leak not in body

"""bin/serve with the two database roles (docs/deploy.md): the owner
(MIGRATION_DATABASE_URL) migrates a fresh database and grants, the server writes as coupon_app,
and the same start with the superuser as DATABASE_URL is refused (config.E003)."""

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
import uuid

import psycopg
import pytest
from django.db import connection

from operations.db_roles import APP_PASSWORD_ENV, APP_ROLE
from tests.api.test_production_defaults import PRODUCTION_ENV, ROOT
from tests.deploy.test_serve import (
    PUBLIC_HOST,
    START_SECONDS,
    get,
    serving,
    url_for,
)

THROUGH_PROXY = {"Host": PUBLIC_HOST, "X-Forwarded-Proto": "https"}


def post(url: str, body: dict, key: str) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={**THROUGH_PROXY, "Content-Type": "application/json",
                 "Authorization": f"Token {key}", "Idempotency-Key": str(uuid.uuid4())})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_bin_serve_migrates_as_the_owner_writes_as_coupon_app_and_refuses_the_superuser(
    tmp_path, fresh_database,
):
    owner_url = url_for(connection.settings_dict["USER"], fresh_database)
    # The suite's setup_db_roles sets coupon_app's password from config/test_settings.py; the
    # role is the cluster's, so bin/serve's setup_db_roles must set the same one.
    password = os.environ[APP_PASSWORD_ENV]
    roles = {"MIGRATION_DATABASE_URL": owner_url, APP_PASSWORD_ENV: password,
             "DATABASE_URL": url_for(APP_ROLE, fresh_database, password),
             "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")}

    with serving(tmp_path, **roles) as base:
        created = subprocess.run(
            [sys.executable, "manage.py", "create_service_client", "shop", "--allow", "all"],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
            env={"PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "config.settings",
                 **PRODUCTION_ENV, "DATABASE_URL": owner_url})
        assert created.returncode == 0, created.stderr
        key = created.stdout.splitlines()[-1]

        status, template = post(f"{base}/api/v1/templates", {
            "code": "off30", "name": "30 off 200", "kind": "AMOUNT_OFF",
            "face_value": "30.00", "min_order_amount": "200.00", "valid_days": 30}, key)
        assert status == 201, template
        status, coupon = post(f"{base}/api/v1/coupons",
                              {"template_id": template["id"], "user_id": "u1"}, key)
        assert status == 201, coupon
        status, locked = post(f"{base}/api/v1/coupons/{coupon['id']}/lock",
                              {"order_id": "A", "user_id": "u1", "order_amount": "300.00"}, key)
        assert status == 200, locked
        assert (locked["status"], locked["state_version"]) == ("LOCKED", 2)
        # The ledger the application role appended to, as support reads it.
        status, _, body = get(f"{base}/api/v1/coupons/{coupon['id']}/operations",
                              Authorization=f"Token {key}", **THROUGH_PROXY)
        assert status == 200, body
        assert [row["op_type"] for row in json.loads(body)["results"]] == ["ISSUE", "LOCK"]
        # Every connection the server opened logged in as coupon_app, none as the owner.
        with psycopg.connect(owner_url, autocommit=True) as owner:
            logins = owner.execute(
                "SELECT DISTINCT usename::text FROM pg_stat_activity "
                "WHERE datname = current_database() AND backend_type = 'client backend' "
                "AND pid <> pg_backend_pid()").fetchall()
        assert logins == [(APP_ROLE,)]

    server = subprocess.Popen(
        [str(ROOT / "bin" / "serve")], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True, env={
            "PATH": os.environ.get("PATH", ""), **PRODUCTION_ENV, **roles,
            "DATABASE_URL": owner_url, "PYTHON": sys.executable,
            "GUNICORN_BIND": "127.0.0.1:0", "GUNICORN_WORKERS": "1", "GUNICORN_THREADS": "2",
        })
    try:
        output, _ = server.communicate(timeout=START_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGTERM)
        output, _ = server.communicate(timeout=30)
        pytest.fail(f"bin/serve kept serving as the superuser:\n{output}")

    assert server.returncode != 0
    assert "config.E003" in output
    assert "logs in to PostgreSQL ('default') as postgres, which is a superuser" in output
    assert ("Set MIGRATION_DATABASE_URL to the owner's login and DATABASE_URL to "
            "coupon_app's (docs/evidence.md, 'Database roles')") in output

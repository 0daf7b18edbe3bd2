"""DATABASE_URL in libpq's multi-host form: both nodes of a failover pair in one URL,
so a new connection finds whichever is primary now (docs/deploy.md)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import database_config

ROOT = Path(__file__).resolve().parents[2]
HA_URL = ("postgres://coupon_app:secret@10.0.0.1:5461,10.0.0.2:5462/coupons"
          "?target_session_attrs=read-write")


def test_every_host_and_port_reaches_libpq_as_a_list_with_the_session_attribute():
    config = database_config(HA_URL, conn_max_age=0)

    assert config["HOST"] == "10.0.0.1,10.0.0.2"
    assert config["PORT"] == "5461,5462"
    assert (config["NAME"], config["USER"], config["PASSWORD"]) == (
        "coupons", "coupon_app", "secret")
    assert config["OPTIONS"] == {"target_session_attrs": "read-write"}
    assert config["ENGINE"] == "django.db.backends.postgresql"


def test_a_host_without_a_port_gets_postgresql_s_default_port():
    config = database_config("postgres://u@db1,db2:6000/coupons")

    assert (config["HOST"], config["PORT"]) == ("db1,db2", "5432,6000")


def test_a_single_host_url_is_parsed_as_before():
    config = database_config("postgres://u:p@db:5433/coupons")

    assert (config["HOST"], config["PORT"], config["NAME"]) == ("db", 5433, "coupons")


@pytest.mark.parametrize("hosts", ["db1:54x2,db2:5432", "db1:5432,,db2:5432", ":5432,db2"])
def test_a_malformed_host_list_stops_the_start_with_a_sentence(hosts):
    with pytest.raises(ImproperlyConfigured, match="host:port,host:port"):
        database_config(f"postgres://u@{hosts}/coupons")


def test_the_multi_host_form_connects_to_the_node_that_takes_writes():
    """libpq skips a host that refuses (nothing listens on port 1) and keeps the next one."""
    import psycopg
    from django.db import connection

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.update(host=f"127.0.0.1,{params.get('host') or '127.0.0.1'}",
                  port=f"1,{params.get('port') or 5432}", target_session_attrs="read-write",
                  dbname="postgres")
    with psycopg.connect(**params) as conn:
        assert conn.execute("SELECT NOT pg_is_in_recovery()").fetchone() == (True,)
        assert conn.info.port != 1


def database_options(**environment) -> dict:
    """settings.DATABASES["default"]["OPTIONS"] as a fresh process reads them."""
    script = ("import json, django; django.setup(); from django.conf import settings; "
              "options = settings.DATABASES['default'].get('OPTIONS', {}); "
              "print(json.dumps({k: v for k, v in options.items() if k != 'pool'}))")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings",
           "DATABASE_URL": "postgres://u@db1:5432,db2:5432/coupons?target_session_attrs=read-write",
           **environment}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_prepared_statements_are_off_behind_pgbouncer_and_on_by_default():
    assert database_options(DATABASE_PREPARED_STATEMENTS="0") == {
        "target_session_attrs": "read-write", "prepare_threshold": None,
        "server_side_binding": False, "connect_timeout": 5}
    on = database_options(DATABASE_PREPARED_STATEMENTS="")
    assert (on["server_side_binding"], on["prepare_threshold"]) == (True, 5)

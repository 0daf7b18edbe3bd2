"""Many app servers through PgBouncer in transaction pooling mode: the command suite
runs through it.

A PgBouncer of the test's own on port 6460 (HA_PGBOUNCER_PORT) in front of the main cluster,
`pool_mode = transaction`: a server connection is the client's for one transaction only. A nested
pytest runs a representative part of the suite (the races, the LOCK service, every API command) with
DATABASE_URL on PgBouncer and what production sets behind it (docs/deploy.md):
DATABASE_PREPARED_STATEMENTS=0, since a statement psycopg prepared on one server connection does not
exist on the next. The suite's own session setting, tests/app_role.py's `SET ROLE coupon_app` on
each new connection, is per server connection here; a fresh PgBouncer per run starts every server
connection as the owner. In production there is none: the app logs in as its role. Some 80 tests,
run after pytest-django creates and migrates the database through PgBouncer too; several minutes on
a loaded 2-core machine. The database is dropped after.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from tests.deploy.ha.conftest import require

ROOT = Path(__file__).resolve().parents[3]
PORT = int(os.environ.get("HA_PGBOUNCER_PORT", "6460"))
# The races first: run after other tests in one process they meet a metrics-registry clash
# that has nothing to do with PgBouncer (it happens on a direct connection too).
SUITE = [
    "tests/coupons/concurrency/test_races.py",
    "tests/coupons/concurrency/test_idempotency_twins.py",
    "tests/coupons/services/test_lock.py",
    "tests/api/test_commands_api.py",
]

pytestmark = pytest.mark.ha

INI = """\
[databases]
* = host={host} port={port} user={user}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen}
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = 20
max_client_conn = 200
pidfile = {dir}/pgbouncer.pid
logfile = {dir}/pgbouncer.log
"""


def as_postgres(command: list[str]) -> list[str]:
    """PgBouncer refuses to run as root: root (CI) runs it as the postgres user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@pytest.fixture(scope="module")
def pgbouncer():
    program = require("pgbouncer", "pgbouncer")
    settings = connection.settings_dict
    directory = tempfile.mkdtemp(prefix="coupon-pgbouncer-")
    os.chmod(directory, 0o755)
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres")
    ini = Path(directory) / "pgbouncer.ini"
    ini.write_text(INI.format(host=settings["HOST"] or "127.0.0.1", port=settings["PORT"] or 5432,
                              user=settings["USER"], listen=PORT, dir=directory))
    process = subprocess.Popen(as_postgres([program, str(ini)]), start_new_session=True)
    try:
        for _ in range(100):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", PORT)) == 0:
                    break
            if process.poll() is not None:
                pytest.fail(f"pgbouncer exited: {(Path(directory) / 'pgbouncer.log').read_text()}")
            time.sleep(0.1)
        yield f"postgres://{settings['USER']}@127.0.0.1:{PORT}"
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(directory, ignore_errors=True)


def drop_database(name: str) -> None:
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params["dbname"] = "postgres"
    with psycopg.connect(**params, autocommit=True) as owner:
        owner.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_command_suite_passes_through_pgbouncer_in_transaction_pooling_mode(pgbouncer):
    database = f"test_pgbouncer_{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": f"{pgbouncer}/postgres", "TEST_DATABASE_NAME": database,
           "DATABASE_PREPARED_STATEMENTS": "0"}
    try:
        # --reuse-db: pytest-django keeps the database at the end rather than DROP it while
        # PgBouncer still holds server connections to it; it is dropped below, with FORCE.
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider",
             "--reuse-db", *SUITE],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    finally:
        drop_database(database)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]  # "66 passed in 80.1s"
    assert " passed" in summary and "skipped" not in summary, summary

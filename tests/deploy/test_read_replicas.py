"""Read replicas against a real streaming replica (docs/deploy.md).

`bin/replica-cluster up` makes a primary and a `pg_basebackup -R` copy of it streaming from it
(the first free pair of ports from 5450-5459); the app is migrated on the primary and served by
gunicorn three times, as the app role on both nodes and without Redis: two patient servers
(replicas may lag an hour), separate processes as two instances behind a load balancer, and a
strict one (one second). Pausing the replica's WAL replay, or stopping the primary's WAL sender
(a stalled stream), makes it fall behind on demand, so each test shows where its answer came
from by what the answer holds: a state only the primary has, or the old one only the replica
still shows.

Skipped when PostgreSQL's server binaries are missing; REPLICA_TESTS_REQUIRED=1 (.ci/run)
makes that a failure instead.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from fcntl import LOCK_EX, LOCK_UN, flock
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import psycopg
import pytest

from tests.api.test_production_defaults import PRODUCTION_ENV
from tests.deploy.test_serve import free_port

ROOT = Path(__file__).resolve().parents[2]
# Pairs of ports (primary, replica) this suite may use; each xdist worker that runs tests here
# takes the first free pair under a file lock.
PORT_PAIRS = [(port, port + 1) for port in range(
    int(os.environ.get("REPLICA_TEST_FIRST_PORT", "5450")), 5460, 2)]
PORT_LOCK = Path(tempfile.gettempdir()) / "coupon-replica-test-ports.lock"
DATABASE = "coupons"
WAIT_SECONDS = 60  # the longest any wait below may take before the test fails

SEED = """
import json
from decimal import Decimal
from django.contrib.auth.models import Group, User
from django.test import Client
from coupons.capabilities import CLIENT_GRANTS
from coupons.models import FactType
from coupons.services import CommandContext, coupon_issue, service_client_create, template_create
ctx = CommandContext(actor="seed")
template = template_create(code="off30", name="30 off 200", kind="AMOUNT_OFF",
                           face_value=Decimal("30.00"), min_order_amount=Decimal("200.00"),
                           valid_days=30)
coupons = [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon.pk
           for _ in range(7)]  # one per test: they may run in any order
keys = [service_client_create(name=name, capabilities=CLIENT_GRANTS.values(),
                              fact_types=FactType.values)[1] for name in ("writer", "reader")]
sessions = {}
for name, group in (("olga", "operator"), ("pia", "policy_admin")):
    user = User.objects.create_user(name, password="not-used-here")
    user.groups.add(Group.objects.get(name=group))
    browser = Client()
    browser.force_login(user)
    sessions[group] = browser.cookies["sessionid"].value
print(json.dumps({"coupons": coupons, "writer": keys[0], "reader": keys[1],
                  "session": sessions["operator"], "policy_admin": sessions["policy_admin"]}))
"""


def binaries_missing() -> str | None:
    if shutil.which("bash") is None:
        return "bin/replica-cluster is a bash script and bash is not installed"
    if not list(Path("/usr/lib/postgresql").glob("*/bin/pg_basebackup")):
        return "PostgreSQL's server binaries (initdb, pg_basebackup) are not installed"
    if os.geteuid() != 0 and os.environ.get("USER") != "postgres":
        return "the clusters run as the postgres user: run as root or as postgres"
    return None


def sql(port: int, statement: str, *params):
    with psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname=DATABASE,
                         autocommit=True) as conn:
        return conn.execute(statement, params).fetchone()


def manage(*args, env: dict) -> str:
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


@contextmanager
def gunicorn(env: dict, log_path: Path):
    port = free_port()
    log = log_path.open("w+")
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind",
         f"127.0.0.1:{port}", "--workers", "1", "--threads", "2"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while server.poll() is None and time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=5)
                break
            except OSError:
                time.sleep(0.3)
        else:
            log.seek(0)
            pytest.fail(f"gunicorn did not answer within {WAIT_SECONDS}s:\n{log.read()}")
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


@dataclass(frozen=True)
class Nodes:
    directory: str
    primary: int
    replica: int


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def cluster():
    reason = binaries_missing()
    if reason:
        if os.environ.get("REPLICA_TESTS_REQUIRED") == "1":
            pytest.fail(f"REPLICA_TESTS_REQUIRED=1 but {reason}")
        pytest.skip(reason)
    directory = tempfile.mkdtemp(prefix="replica-test-")
    os.chmod(directory, 0o755)  # the postgres user writes its clusters inside
    script = [str(ROOT / "bin" / "replica-cluster")]
    with PORT_LOCK.open("w") as lock_file:
        flock(lock_file, LOCK_EX)  # two workers never pick the same free pair
        try:
            free = [pair for pair in PORT_PAIRS if not any(map(listening, pair))]
            if not free:
                pytest.fail(f"no free pair of ports among {PORT_PAIRS}")
            nodes = Nodes(directory, *free[0])
            node_env = {**os.environ, "PRIMARY_PORT": str(nodes.primary),
                        "REPLICA_PORT": str(nodes.replica)}
            up = subprocess.run([*script, "up", directory], env=node_env, timeout=120,
                                capture_output=True, text=True)
        finally:
            flock(lock_file, LOCK_UN)
    try:
        assert up.returncode == 0, up.stderr + up.stdout
        yield nodes
    finally:
        subprocess.run([*script, "down", directory], env=node_env, timeout=120,
                       capture_output=True)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def app(cluster):
    """The schema and roles on the primary (replayed on the replica), seeded; two servers."""
    primary, replica = cluster.primary, cluster.replica
    sql_admin = psycopg.connect(host="127.0.0.1", port=primary, user="postgres",
                                dbname="postgres", autocommit=True)
    with sql_admin:
        sql_admin.execute(f"CREATE DATABASE {DATABASE}")
    env = {"PATH": os.environ.get("PATH", ""), "DJANGO_SETTINGS_MODULE": "config.settings",
           **PRODUCTION_ENV, "DJANGO_ALLOWED_HOSTS": "127.0.0.1", "DJANGO_HTTPS": "0",
           "DJANGO_BEHIND_TLS_PROXY": "0", "COUPON_APP_DB_PASSWORD": "replica-test-only",
           "DATABASE_URL": f"postgres://postgres@127.0.0.1:{primary}/{DATABASE}"}
    manage("migrate", "--noinput", "-v0", env=env)
    manage("setup_db_roles", "-v0", env=env)
    seeded = json.loads(manage("shell", "-c", SEED, env=env).strip().splitlines()[-1])
    served = {**env, "DB_POOL_MAX_SIZE": "2",
              "DATABASE_URL": f"postgres://coupon_app@127.0.0.1:{primary}/{DATABASE}",
              "DATABASE_REPLICA_URLS": f"postgres://coupon_app@127.0.0.1:{replica}/{DATABASE}"}
    logs = Path(cluster.directory)
    with (gunicorn({**served, "DATABASE_REPLICA_MAX_LAG_SECONDS": "3600"},
                   logs / "patient.log") as patient,
          gunicorn({**served, "DATABASE_REPLICA_MAX_LAG_SECONDS": "3600"},
                   logs / "other.log") as other,
          gunicorn({**served, "DATABASE_REPLICA_MAX_LAG_SECONDS": "1"},
                   logs / "strict.log") as strict):
        yield {**seeded, "patient": patient, "other": other, "strict": strict,
               "nodes": cluster}


@pytest.fixture
def paused_replica(app):
    """The replica receives the primary's WAL but replays none of it until the test ends."""
    sql(app["nodes"].replica, "SELECT pg_wal_replay_pause()")
    yield
    sql(app["nodes"].replica, "SELECT pg_wal_replay_resume()")
    caught_up(app["nodes"])


@contextmanager
def stalled_stream(nodes: Nodes):
    """A network stall: the primary's WAL sender stopped (SIGSTOP), its connection up. The
    replica's WAL receiver is alive and has replayed everything it received, so by its own
    lights it is caught up; it just receives nothing more."""
    (sender,) = sql(nodes.primary, "SELECT pid FROM pg_stat_replication")
    os.kill(sender, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(sender, signal.SIGCONT)
    caught_up(nodes)


def caught_up(nodes: Nodes) -> None:
    target = sql(nodes.primary, "SELECT pg_current_wal_insert_lsn()")[0]
    wait_for(lambda: sql(nodes.replica, "SELECT pg_last_wal_replay_lsn() >= %s", target)[0],
             "the replica to replay the primary's WAL")


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {WAIT_SECONDS}s for {what}")
        time.sleep(0.2)


def request(url: str, *, key=None, session=None, body=None, token=None
            ) -> tuple[int, dict, str]:
    """`token`: the X-Consistency-Token of the client's last write, sent back."""
    headers = {}
    if key:
        headers["Authorization"] = f"Token {key}"
    if session:
        headers["Cookie"] = f"sessionid={session}"
    if token:
        headers["X-Consistency-Token"] = token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers.update({"Content-Type": "application/json", "Idempotency-Key": str(uuid.uuid4())})
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers),
                                    timeout=30) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def coupon_state(base: str, coupon: int, key: str, token=None) -> tuple[str, str | None]:
    """The coupon's status as this client reads it, and X-Data-As-Of (None: the primary)."""
    status, headers, body = request(f"{base}/api/v1/coupons/{coupon}", key=key, token=token)
    assert status == 200, body
    return json.loads(body)["status"], headers.get("X-Data-As-Of")


def lock(base: str, coupon: int, key: str) -> str:
    """Locks the coupon; returns the answer's X-Consistency-Token."""
    status, headers, body = request(f"{base}/api/v1/coupons/{coupon}/lock", key=key,
                                    body={"order_id": f"order-{coupon}", "user_id": "u1",
                                          "order_amount": "300.00"})
    assert status == 200, body
    return headers["X-Consistency-Token"]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def browse(url: str, cookies: dict, form=None) -> tuple[int, dict, str]:
    """A browser: sends its cookies to whichever server (one host: every server process gets
    them, as behind a load balancer) and keeps the ones an answer sets."""
    headers = {"Cookie": "; ".join(f"{name}={value}" for name, value in cookies.items())}
    data = urlencode(form).encode() if form is not None else None
    opener = urllib.request.build_opener(NoRedirect)
    try:
        response = opener.open(urllib.request.Request(url, data=data, headers=headers),
                                timeout=30)
    except urllib.error.HTTPError as error:
        response = error
    with response:
        for line in response.headers.get_all("Set-Cookie") or []:
            cookies.update({name: morsel.value for name, morsel in SimpleCookie(line).items()})
        return response.status, dict(response.headers), response.read().decode()


def test_api_gets_and_console_pages_read_from_the_replica_and_say_as_of_when(app):
    coupon = app["coupons"][0]

    status, as_of = coupon_state(app["patient"], coupon, app["reader"])
    page_status, page_headers, page = request(f"{app['patient']}/coupons/{coupon}/",
                                              session=app["session"])

    assert (status, as_of is not None) == ("AVAILABLE", True)
    assert page_status == 200 and "X-Data-As-Of" in page_headers
    assert "Data as of" in page and "read from a replica" in page


def test_a_writer_reads_its_write_at_once_from_another_server_process(app):
    coupon = app["coupons"][1]
    sql(app["nodes"].replica, "SELECT pg_wal_replay_pause()")
    try:
        token = lock(app["patient"], coupon, app["writer"])
        # The replica has not replayed the lock. The writer's next read reaches another server
        # process, which knows the write only from the token the writer sends back: to the
        # primary. Without it, the replica's older answer, marked with its age.
        writer_reads = coupon_state(app["other"], coupon, app["writer"], token)
        without_token = coupon_state(app["other"], coupon, app["writer"])
        reader_reads = coupon_state(app["other"], coupon, app["reader"])
    finally:
        sql(app["nodes"].replica, "SELECT pg_wal_replay_resume()")
    caught_up(app["nodes"])
    # Once the replica has replayed the write, the writer reads from it again.
    writer_later = coupon_state(app["other"], coupon, app["writer"], token)

    assert writer_reads == ("LOCKED", None)
    assert without_token[0] == "AVAILABLE" and without_token[1] is not None
    assert reader_reads[0] == "AVAILABLE" and reader_reads[1] is not None
    assert writer_later[0] == "LOCKED" and writer_later[1] is not None


def test_a_person_sees_their_note_on_the_next_page_whichever_server_answers_it(
        app, paused_replica):
    coupon = app["coupons"][5]
    page_url = f"{app['patient']}/coupons/{coupon}/"
    browser = {"sessionid": app["session"]}
    _, _, form_page = browse(page_url, browser)
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form_page).group(1)
    sent, _, _ = browse(f"{app['patient']}/coupons/{coupon}/notes/", browser, form={
        "csrfmiddlewaretoken": csrf, "text": "Customer called about order 77",
        "form_key": str(uuid.uuid4())})
    # The next page from the other server process: the browser's cookie carries the write.
    _, headers, page = browse(f"{app['other']}/coupons/{coupon}/", browser)
    # The same person without that cookie: the paused replica's page, without the note.
    _, old_headers, old_page = browse(f"{app['other']}/coupons/{coupon}/",
                                      {"sessionid": app["session"]})

    assert sent == 302 and "consistency_token" in browser
    assert "Customer called about order 77" in page and "X-Data-As-Of" not in headers
    assert "Customer called about order 77" not in old_page and "X-Data-As-Of" in old_headers


def test_a_stalled_wal_stream_shows_its_real_age_or_leaves_the_read_to_the_primary(app):
    """The stall the replica cannot see: with the primary's WAL sender stopped and the
    connection up, the replica has replayed all it received. Its data is as old as the last
    commit it replayed, and it says so, or the primary answers: never "as of now" without the
    lock."""
    coupon = app["coupons"][6]
    nodes = app["nodes"]
    caught_up(nodes)
    with stalled_stream(nodes):
        (before_lock,) = sql(nodes.primary, "SELECT now()")
        lock(app["patient"], coupon, app["writer"])
        wait_for(lambda: sql(nodes.primary, "SELECT now() - %s > interval '1.5 seconds'",
                             before_lock)[0],
                 "the lock to be more than a second old (the strict server's bound)")
        (replica_thinks_it_is_caught_up,) = sql(
            nodes.replica, "SELECT pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() "
                           "AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE pid IS NOT NULL)")
        strict = coupon_state(app["strict"], coupon, app["reader"])
        patient = coupon_state(app["patient"], coupon, app["reader"])
        _, page_headers, page = request(f"{app['patient']}/coupons/{coupon}/",
                                        session=app["session"])

    assert replica_thinks_it_is_caught_up
    assert strict == ("LOCKED", None)
    assert patient[0] == "AVAILABLE"
    assert datetime.fromisoformat(patient[1]) <= before_lock
    assert "Data as of" in page
    assert datetime.fromisoformat(page_headers["X-Data-As-Of"]) <= before_lock


def test_a_replica_lagging_past_the_bound_is_passed_over_for_the_primary(app, paused_replica):
    coupon = app["coupons"][2]
    lock(app["patient"], coupon, app["writer"])
    # The strict server's bound is one second: wait until the paused replica is further behind.
    wait_for(lambda: sql(app["nodes"].replica, "SELECT now() - pg_last_xact_replay_timestamp() "
                                       "> interval '1.5 seconds'")[0],
             "the paused replica to fall more than a second behind")

    strict = coupon_state(app["strict"], coupon, app["reader"])
    patient = coupon_state(app["patient"], coupon, app["reader"])
    _, page_headers, page = request(f"{app['strict']}/coupons/{coupon}/",
                                    session=app["session"])

    assert strict == ("LOCKED", None)
    assert patient[0] == "AVAILABLE" and patient[1] is not None
    assert "X-Data-As-Of" not in page_headers and "Data as of" not in page


def test_commands_and_console_forms_never_read_from_the_replica(app, paused_replica):
    coupon = app["coupons"][3]
    lock(app["patient"], coupon, app["writer"])

    # The reader has written nothing lately, so its GETs may read the paused replica; its
    # command is still checked against the primary, where the coupon is locked.
    status, _, body = request(f"{app['patient']}/api/v1/coupons/{coupon}/lock",
                              key=app["reader"], body={"order_id": "another", "user_id": "u1",
                                                       "order_amount": "300.00"})
    # A page that prepares a write reads from the primary; the list beside it, a replica.
    _, editor_headers, _ = request(f"{app['patient']}/policies/new/",
                                   session=app["policy_admin"])
    _, list_headers, _ = request(f"{app['patient']}/policies/", session=app["policy_admin"])

    assert status == 409 and json.loads(body)["error"]["details"]["current_state"] == "LOCKED"
    assert "X-Data-As-Of" not in editor_headers and "X-Data-As-Of" in list_headers


def test_a_replica_that_is_down_leaves_reads_to_the_primary(app):
    # The strict server: it leaves a failed replica alone for a while afterwards, and no other
    # test expects it to read from the replica.
    coupon = app["coupons"][4]
    pg_ctl = [*(["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []),
              str(sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))[-1]),
              "-D", f"{app['nodes'].directory}/replica", "-w",
              "-l", f"{app['nodes'].directory}/replica/server.log"]
    caught_up(app["nodes"])
    while_up = coupon_state(app["strict"], coupon, app["reader"])
    subprocess.run([*pg_ctl, "-m", "immediate", "stop"], check=True, capture_output=True,
                   timeout=60)
    try:
        while_down = coupon_state(app["strict"], coupon, app["reader"])
    finally:
        subprocess.run([*pg_ctl, "start"], check=True, capture_output=True, timeout=60)

    assert while_up[0] == "AVAILABLE" and while_up[1] is not None
    assert while_down == ("AVAILABLE", None)

"""bin/run-demo on the embedded PostgreSQL 18, as a new user runs it: no DATABASE_URL.

The demo starts (or reuses) the checkout's `.pgdata/demo` cluster, migrates and grants as the
owner and serves as the application role: the server's connections are coupon_app's, the
ledger refuses an UPDATE (the role's grants, and the triggers even for the owner), and a lock
and a redeem go through the API. The rest of the suite runs on DATABASE_URL's server in CI
(PostgreSQL 15), so this is what covers the embedded major there.

The demo runs what production runs beside its server: its relay publishes to the broker
(RabbitMQ on 127.0.0.1:5672, the demo's own exchange), its checkpoint job signs what the
console then shows as covered, and stopping the demo stops every one of its processes.

It starts the checkout's own demo (a minute on a fresh checkout), so it runs only with
DEMO_SMOKE_TESTS=1, which .ci/run sets; it never resets the demo, and stops the cluster at the
end only if it started it.
"""

import http.cookiejar
import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pika
import pika.exceptions
import psycopg
import pytest

from common import embedded_postgres
from operations.db_roles import APP_ROLE
from tests.deploy.test_serve import free_port

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 600  # a fresh checkout: install, initdb, migrate, seed
WAIT_SECONDS = 120  # for the demo's background processes to do what the test waits for
# The demo's checkpoint job, every few seconds here instead of every minute: CI's time.
CHECKPOINT_SECONDS = "5"
DEMO_EXCHANGE = "demo.coupons"  # bin/run-demo's BROKER_EVENTS_EXCHANGE
DEMO_FACTS_EXCHANGE, DEMO_FACTS_QUEUE = "demo.facts", "demo.coupons.facts"
FORGE = ("UPDATE coupons_couponoperation SET actor = 'forged' "
         "WHERE id = (SELECT min(id) FROM coupons_couponoperation)")

pytestmark = pytest.mark.skipif(os.environ.get("DEMO_SMOKE_TESTS") != "1",
                                reason="starts the checkout's demo; DEMO_SMOKE_TESTS=1 runs it")


def demo_env(**extra) -> dict:
    """bin/run-demo's environment as a user's shell has it: no DATABASE_URL, none of the
    suite's settings."""
    keep = ("PATH", "HOME", "LANG", "TMPDIR")
    return {**{k: os.environ[k] for k in keep if k in os.environ}, **extra}


def demo_processes(session: int) -> dict[int, str]:
    """The demo's Django processes (pid: command line): bin/run-demo was started as the leader
    of a session of its own."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        # The fields after the command's name, which may hold spaces: state, ppid, pgrp, sid.
        if int(stat.rsplit(")", 1)[1].split()[3]) == session and "manage.py" in command:
            found[int(entry.name)] = command
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(condition, what: str):
    deadline = time.monotonic() + WAIT_SECONDS
    while not (result := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"not within {WAIT_SECONDS} s: {what}")
        time.sleep(1)
    return result


def call(url, body=None, key=None) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST",
        headers={"Content-Type": "application/json", "Authorization": f"Token {key}",
                 "Idempotency-Key": str(uuid.uuid4())})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


# The demo's terminal, by the fixture below: what a newcomer reads.
TERMINAL = {}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    was_running = embedded_postgres.running("demo")
    port = free_port()
    log = (tmp_path_factory.mktemp("demo") / "run-demo.log").open("w+")
    TERMINAL["path"] = log.name
    server = subprocess.Popen([str(ROOT / "bin" / "run-demo")], cwd=ROOT,
                              env=demo_env(PORT=str(port),
                                           DEMO_CHECKPOINT_SECONDS=CHECKPOINT_SECONDS),
                              stdout=log,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=5)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    pytest.fail(f"bin/run-demo did not serve:\n{log.read()[-5000:]}")
                time.sleep(1)
        yield base
    finally:
        processes = demo_processes(server.pid)
        # SIGTERM to bin/run-demo alone, as `kill PID` sends it: its trap stops the server, the
        # background processes and the cluster it started (SIGTERM: a process started in the
        # background, as CI may start this run, ignores SIGINT).
        os.kill(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            raise
        log.seek(0)
        output = log.read()
        log.close()
    assert embedded_postgres.running("demo") == was_running
    commands = " ".join(processes.values())
    for started in ("runserver", "run_demo_jobs", "relay_outbox", "consume_facts"):
        assert started in commands, f"{started} was not running:\n{output[-5000:]}"
    assert [pid for pid in processes if alive(pid)] == [], output[-5000:]


def owner() -> psycopg.Connection:
    return psycopg.connect(embedded_postgres.start("demo").url(), autocommit=True)


def test_the_demo_server_logs_in_as_the_application_role(demo):
    assert urllib.request.urlopen(f"{demo}/login/", timeout=30).status == 200
    with owner() as conn:
        assert conn.execute("SHOW server_version_num").fetchone()[0].startswith("18")
        logins = conn.execute(
            "SELECT DISTINCT usename::text FROM pg_stat_activity "
            "WHERE datname = current_database() AND backend_type = 'client backend' "
            "AND pid <> pg_backend_pid()").fetchall()
    # runserver's pool keeps its connections open: each is coupon_app's.
    assert logins == [(APP_ROLE,)]
    cluster = embedded_postgres.start("demo")
    with psycopg.connect(cluster.url(user=APP_ROLE), autocommit=True) as app:
        assert app.execute("SELECT current_user").fetchone() == (APP_ROLE,)


def test_the_ledger_refuses_an_update_from_the_app_role_and_from_the_owner(demo):
    cluster = embedded_postgres.start("demo")
    with psycopg.connect(cluster.url(user=APP_ROLE), autocommit=True) as app, \
            pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute(FORGE)
    # The owner may UPDATE, but the history trigger refuses it.
    with owner() as conn, pytest.raises(psycopg.errors.RaiseException, match="pgtrigger"):
        conn.execute(FORGE)


@pytest.fixture(scope="module")
def key(demo) -> str:
    created = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "manage.py", "create_service_client",
         f"smoke-{uuid.uuid4().hex[:8]}", "--allow", "all"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env=demo_env(DJANGO_SETTINGS_MODULE="config.test_settings", EMBEDDED_DATABASE="demo",
                     EMBEDDED_DATABASE_USER=APP_ROLE))
    assert created.returncode == 0, created.stderr
    return created.stdout.splitlines()[-1]


def issue(demo, key) -> dict:
    status, template = call(f"{demo}/api/v1/templates", {
        "code": f"smoke-{uuid.uuid4().hex[:8]}", "name": "30 off 200", "kind": "AMOUNT_OFF",
        "face_value": "30.00", "min_order_amount": "200.00", "valid_days": 30}, key)
    assert status == 201, template
    status, coupon = call(f"{demo}/api/v1/coupons",
                          {"template_id": template["id"], "user_id": "smoke"}, key)
    assert status == 201, coupon
    return coupon


def test_a_lock_and_a_redeem_go_through_the_api(demo, key):
    coupon = issue(demo, key)
    status, locked = call(f"{demo}/api/v1/coupons/{coupon['id']}/lock",
                          {"order_id": "smoke-A", "user_id": "smoke", "order_amount": "300.00"},
                          key)
    assert (status, locked.get("status")) == (200, "LOCKED"), locked
    status, redeemed = call(f"{demo}/api/v1/coupons/{coupon['id']}/redeem", {
        "order_id": "smoke-A", "lock_token": locked["lock_token"],
        "expected_version": locked["state_version"], "payment_id": "smoke-P"}, key)
    assert (status, redeemed.get("status")) == (200, "USED"), redeemed
    status, ledger = call(f"{demo}/api/v1/coupons/{coupon['id']}/operations", key=key)
    assert [row["op_type"] for row in ledger["results"]] == ["ISSUE", "LOCK", "REDEEM"]


def test_the_demo_relay_publishes_what_the_demo_wrote(demo, key):
    connection = pika.BlockingConnection(pika.URLParameters("amqp://guest:guest@127.0.0.1:5672/%2F"))
    try:
        channel = connection.channel()
        # As the relay declares it, whichever of the two comes first.
        channel.exchange_declare(DEMO_EXCHANGE, exchange_type="topic", durable=True)
        queue = channel.queue_declare("", exclusive=True, auto_delete=True).method.queue
        channel.queue_bind(queue, DEMO_EXCHANGE, routing_key="#")
        coupon = issue(demo, key)

        def issued():
            while (message := channel.basic_get(queue, auto_ack=True))[0] is not None:
                body = json.loads(message[2])
                if body.get("coupon_id") == coupon["id"]:
                    return body
            return None

        body = wait_for(issued, f"the demo's relay publishing coupon {coupon['id']}'s issue")
    finally:
        connection.close()
    assert body["event_type"] == "CouponIssued"


def test_a_coupon_page_shows_the_checkpoint_the_demo_signed(demo, key):
    coupon = issue(demo, key)
    browser = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    browser.addheaders = [("Accept-Language", "en")]
    form = browser.open(f"{demo}/login/", timeout=30).read().decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    browser.open(f"{demo}/login/", urllib.parse.urlencode(
        {"username": "support", "password": "support-demo", "csrfmiddlewaretoken": csrf}
    ).encode(), timeout=30)

    def page():
        return browser.open(f"{demo}/coupons/{coupon['id']}/", timeout=30).read().decode()

    covered = wait_for(lambda: "Covered by checkpoint" in (text := page()) and text,
                       f"a checkpoint covering coupon {coupon['id']}")
    assert "no signed checkpoint covers this coupon yet" not in covered


def test_the_demo_consumer_takes_an_order_closed_fact_and_the_lease_goes(demo, key):
    coupon = issue(demo, key)
    order = f"smoke-close-{uuid.uuid4().hex[:8]}"
    status, locked = call(f"{demo}/api/v1/coupons/{coupon['id']}/lock",
                          {"order_id": order, "user_id": "smoke", "order_amount": "300.00"}, key)
    assert (status, locked.get("status")) == (200, "LOCKED"), locked
    connection = pika.BlockingConnection(pika.URLParameters("amqp://guest:guest@127.0.0.1:5672/%2F"))
    try:

        def bound_queue():
            # The consumer declares its queue once it is up: a fact sent before would be lost.
            try:
                return connection.channel().queue_declare(DEMO_FACTS_QUEUE, passive=True)
            except pika.exceptions.ChannelClosedByBroker:
                return None

        wait_for(bound_queue, f"the demo's consumer declaring {DEMO_FACTS_QUEUE}")
        connection.channel().basic_publish(DEMO_FACTS_EXCHANGE, "OrderClosed", json.dumps({
            "message_id": f"msg-{order}", "type": "OrderClosed",
            "occurred_at": datetime.now(UTC).isoformat(), "payload": {"order_id": order}}).encode())
    finally:
        connection.close()

    def released():
        status, now = call(f"{demo}/api/v1/coupons/{coupon['id']}", key=key)
        return now if now.get("status") == "AVAILABLE" else None

    wait_for(released, f"the demo's consumer releasing coupon {coupon['id']} for {order}")


def test_the_terminal_reads_as_text_without_warnings(demo):
    urllib.request.urlopen(f"{demo}/login/", timeout=30)
    with open(TERMINAL["path"]) as terminal:
        text = terminal.read()

    assert "This is a development server" not in text
    assert "No directory at" not in text  # whitenoise's missing STATIC_ROOT
    assert 'INFO django.server "GET /login/ HTTP/1.1" 200' in text
    assert '{"time"' not in text  # no JSON log line

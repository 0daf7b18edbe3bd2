"""Failover drill: API clients lock and redeem while the primary dies.

On the pg_auto_failover cluster of `bin/ha-cluster up` (a monitor, a primary and a synchronous
secondary); rerun by hand with

    bin/ha-cluster up && .venv/bin/python scripts/ha_failover_drill.py; bin/ha-cluster down

(tests/deploy/ha/test_failover.py runs it in CI). The script migrates the cluster's database through
the multi-host DATABASE_URL (`bin/ha-cluster url`), makes a template, coupons and service
clients, then starts what production runs: bin/serve (gunicorn, pooled connections), the
outbox relay, the fact consumer and the lease scanner in loop mode, all on that URL. --clients
threads lock and redeem over HTTP, a fresh Idempotency-Key per command kept across its retries
(a 503, a 5xx or a lost connection is retried after a short pause). After --before seconds
`bin/ha-cluster crash` kills the primary's keeper and stops its PostgreSQL with
`pg_ctl stop -m immediate`; pg_auto_failover promotes the secondary, and the clients go on
for --after seconds once all of them are served again. Then `bin/ha-cluster rejoin` brings the
crashed node back as the secondary while the clients keep going. Printed as one JSON object (the
last line):

  failover_s          from the crash until the promoted node took a read-write session;
  rejoin_s, rejoined_with
                      how long `bin/ha-cluster rejoin` took the crashed node to be the
                      synchronous secondary again, and whether pg_rewind or pg_basebackup did it;
  acknowledged_during_rejoin
                      commands the clients saw succeed while it rejoined;
  missing_on_nodes    per node, acknowledged commands whose ledger row it does not have, once the
                      secondary replayed everything the primary had written;
  unavailable_s       the longest time from the crash on in which no client had a command
                      answered; `all_resumed_s`: from the crash until every client had one;
                      `answered_at_s`: when each command was answered, from the crash;
  answers             every status the clients saw, and connection errors;
  acknowledged, lost, duplicated
                      commands a client saw succeed; of those, how many have no ledger row
                      with their Idempotency-Key on the new primary, or more than one;
  check_failures      coupons whose check (coupons.evidence.replay.coupon_check) is not ok;
  unpublished         outbox rows the relay had not published 30 s after the clients stopped;
  scanner_released    whether a lease made after the failover and let expire was released by
                      the scanner loop that was running through it.
  facts_consumed      whether the consumer stored a fact sent before the crash and one after.
"""

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from decimal import Decimal
from urllib.parse import urlsplit, urlunsplit

# The benchmarks' set-up (a database, the broker, a server) is the drill's too.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "benchmarks"))
from bench_setup import ROOT, scratch_exchange, setup_django, wait_ready  # noqa: E402

HA_CLUSTER = str(ROOT / "bin" / "ha-cluster")
RETRY_PAUSE_SECONDS = 0.1
# Between two cycles of a client: a checkout's pace, so a fast machine does not use up the
# coupons before the failover is over.
CYCLE_PAUSE_SECONDS = 0.25
COMMAND_DEADLINE_SECONDS = 60  # one command's retries give up after this (the drill fails)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--before", type=float, default=2.0,
                        help="seconds of work before, once every client has been answered")
    parser.add_argument("--after", type=float, default=2.0,
                        help="seconds of work after every client is served again")
    # Enough for the clients to keep writing through the failover and the rejoin after it at
    # their checkout's pace, about 75 s: a rejoin by pg_basebackup alone took 26 s on a quiet
    # machine, where 100 coupons ran out before it was over.
    parser.add_argument("--coupons", type=int, default=300, help="coupons per client")
    return parser.parse_args()


class Client(threading.Thread):
    """Locks then redeems its own coupons over one keep-alive connection, retrying each
    command with the same Idempotency-Key until it is answered."""

    def __init__(self, port: int, key: str, coupon_ids: list[int], stop: threading.Event):
        super().__init__(daemon=True)
        self.port, self.key, self.coupon_ids, self.stop = port, key, coupon_ids, stop
        self.acknowledged: list[tuple[int, str, str, float]] = []  # coupon, op, key, when
        self.answers: Counter = Counter()
        self.failure: str | None = None
        self.connection = None

    def post(self, coupon_id: int, op: str, body: dict) -> dict:
        key = uuid.uuid4().hex
        deadline = time.monotonic() + COMMAND_DEADLINE_SECONDS
        while time.monotonic() < deadline:
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection("127.0.0.1", self.port,
                                                                 timeout=30)
                self.connection.request(
                    "POST", f"/api/v1/coupons/{coupon_id}/{op}", json.dumps(body),
                    {"Authorization": f"Token {self.key}", "Content-Type": "application/json",
                     "X-Forwarded-Proto": "https", "Idempotency-Key": key})
                response = self.connection.getresponse()
                status, answer = response.status, json.loads(response.read() or b"{}")
            except (OSError, http.client.HTTPException, json.JSONDecodeError):
                self.answers["connection error"] += 1
                self.connection = None
                time.sleep(RETRY_PAUSE_SECONDS)
                continue
            self.answers[str(status)] += 1
            if status == 200:
                self.acknowledged.append((coupon_id, op.upper(), key, time.monotonic()))
                return answer
            if status < 500:
                raise RuntimeError(f"{op} of coupon {coupon_id}: {status} {answer}")
            time.sleep(RETRY_PAUSE_SECONDS)
        raise RuntimeError(f"{op} of coupon {coupon_id}: no answer in {COMMAND_DEADLINE_SECONDS}s")

    def run(self):
        try:
            for coupon_id in self.coupon_ids:
                if self.stop.is_set():
                    return
                order = f"drill-{coupon_id}"
                locked = self.post(coupon_id, "lock", {
                    "order_id": order, "user_id": "drill", "order_amount": "300.00"})
                self.post(coupon_id, "redeem", {
                    "order_id": order, "lock_token": locked["lock_token"],
                    "expected_version": locked["state_version"], "payment_id": f"pay-{coupon_id}"})
                self.stop.wait(CYCLE_PAUSE_SECONDS)
            self.failure = "ran out of coupons (raise --coupons)"
        except RuntimeError as error:
            self.failure = str(error)

    def first_success_after(self, moment: float) -> float | None:
        return next((when for *_, when in self.acknowledged if when > moment), None)


def progress(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(command: list[str], env: dict, log_name: str) -> subprocess.Popen:
    log = open(os.path.join(os.environ.get("HA_DRILL_LOG_DIR", "/tmp"), log_name), "w")  # noqa: SIM115
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop_all(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def prepare(clients: int, per_client: int) -> tuple[list[list[int]], str, int, str]:
    """Template, coupons issued (one list per client, plus one for the scanner), an API key,
    and the name of a client whose facts the consumer takes."""
    from coupons.capabilities import Capability
    from coupons.services import (
        CommandContext,
        coupon_issue,
        service_client_create,
        template_create,
    )

    template = template_create(
        code=f"drill-{uuid.uuid4().hex[:6]}", name="drill 30 off", kind="AMOUNT_OFF",
        face_value=Decimal("30.00"), min_order_amount=Decimal("0.00"), valid_days=3650)
    ctx = CommandContext(actor="drill")
    ids = [coupon_issue(template_id=template.pk, user_id="drill", ctx=ctx).coupon.pk
           for _ in range(clients * per_client + 1)]
    _, key = service_client_create(name=f"drill-{uuid.uuid4().hex[:6]}",
                                   capabilities=list(Capability))
    facts_client, _ = service_client_create(name=f"drill-facts-{uuid.uuid4().hex[:6]}",
                                            fact_types=["OrderClosed"])
    batches = [ids[i * per_client:(i + 1) * per_client] for i in range(clients)]
    return batches, key, ids[-1], facts_client.name


def verify(acknowledged: list[tuple[int, str, str, float]], coupon_ids: set[int]) -> dict:
    """On the new primary: each acknowledged command's ledger rows, every coupon's check."""
    from django.db import connection

    from coupons.evidence.replay import coupon_check
    from coupons.models import CouponOperation, UserCoupon

    connection.close()  # the old primary's connection, if any
    rows = Counter(CouponOperation.objects.filter(coupon_id__in=coupon_ids)
                   .values_list("idempotency_key", flat=True))
    lost = [entry for entry in acknowledged if rows[entry[2]] == 0]
    duplicated = [entry for entry in acknowledged if rows[entry[2]] > 1]
    failures = [c.pk for c in UserCoupon.objects.filter(pk__in=coupon_ids)
                if not coupon_check(c).ok]
    return {"acknowledged": len(acknowledged), "lost": len(lost),
            "duplicated": len(duplicated), "check_failures": failures,
            "coupons_checked": len(coupon_ids)}


def longest_silence(acknowledged: list[tuple[int, str, str, float]], crashed_at: float) -> float:
    """The longest time no client had a command answered from the crash on (the first gap runs
    from the crash itself): the service's unavailability as its clients saw it."""
    points = [crashed_at, *sorted(when for *_, when in acknowledged if when > crashed_at)]
    return max((later - earlier for earlier, later in zip(points, points[1:], strict=False)),
               default=0.0)


def wait_until(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:  # noqa: BLE001 - the database may still be coming back
            from django.db import connection
            connection.close()
        time.sleep(0.5)
    return False


def node_urls(url: str) -> dict[str, str]:
    """One URL per node of the multi-host URL, named by its data directory's last part."""
    import psycopg

    parts = urlsplit(url)
    nodes = {}
    for host in parts.netloc.split("@")[-1].split(","):
        single = urlunsplit(parts._replace(netloc=f"postgres@{host}", query="connect_timeout=5"))
        with psycopg.connect(single) as session:
            directory = session.execute("SHOW data_directory").fetchone()[0]
        nodes[os.path.basename(directory)] = single
    return nodes


def missing_on_nodes(url: str, keys: list[str]) -> dict[str, int]:
    """Per node: acknowledged commands with no ledger row there. The secondary is read once it
    has replayed the primary's WAL up to now (a synchronous commit waits for its flush, not its
    replay)."""
    import psycopg

    with psycopg.connect(url) as primary:
        written = primary.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    missing = {}
    for name, node in node_urls(url).items():
        with psycopg.connect(node, autocommit=True) as session:
            deadline = time.monotonic() + 60
            while session.execute(
                    "SELECT pg_is_in_recovery() AND pg_last_wal_replay_lsn() < %s::pg_lsn",
                    [written]).fetchone()[0]:
                if time.monotonic() > deadline:
                    sys.exit(f"{name} did not replay the primary's WAL in 60 s")
                time.sleep(0.2)
            found = {key for (key,) in session.execute(
                "SELECT idempotency_key FROM coupons_couponoperation"
                " WHERE idempotency_key = ANY(%s)", [keys])}
        missing[name] = len(set(keys) - found)
    return missing


def time_to_read_write(url: str, since: float, into: dict) -> None:
    """Polls the multi-host URL until a node takes a read-write session: the old primary is
    dead, so that is the promoted one."""
    import psycopg

    while time.monotonic() - since < COMMAND_DEADLINE_SECONDS:
        try:
            with psycopg.connect(f"{url}&connect_timeout=1") as session:
                session.execute("SELECT 1")
            into["failover_s"] = round(time.monotonic() - since, 2)
            return
        except psycopg.Error:
            time.sleep(0.1)


def publish_fact(channel, exchange: str, message_id: str) -> None:
    """An OrderClosed fact, as the order service would send it."""
    body = {"message_id": message_id, "type": "OrderClosed",
            "occurred_at": "2026-01-01T00:00:00+00:00", "payload": {"order_id": message_id}}
    channel.basic_publish(exchange, "fact", json.dumps(body).encode())


def drill(args, url: str, exchange: str, facts) -> dict:
    from django.db import connection

    from coupons.models import InboxMessage, OutboxEvent, UserCoupon

    channel, facts_exchange = facts
    batches, key, scanner_coupon, facts_client = prepare(args.clients, args.coupons)
    progress("coupons issued; starting the server, the relay, the consumer and the scanner")
    connection.close()
    port = free_port()
    env = {**os.environ, "DATABASE_URL": url, "PYTHON": sys.executable,
           "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_WORKERS": "2",
           "GUNICORN_THREADS": str(max(4, args.clients // 2)), "SERVE_MIGRATE": "0",
           "DJANGO_ALLOWED_HOSTS": "127.0.0.1", "DJANGO_BEHIND_TLS_PROXY": "1",
           "TRUSTED_PROXY_ADDRESSES": "127.0.0.1",
           "API_THROTTLE_SERVICE_CLIENT": "1000000/min", "DB_POOL_MAX_SIZE": "",
           # The cluster's database is this drill's own: no app role to serve as.
           "ALLOW_DB_OWNER_LOGIN": "1", "WORKER_RETRY_MAX_MS": "2000"}
    manage = [sys.executable, "manage.py"]
    # gunicorn's workers share their counters through files in a directory of this run's own.
    metrics = tempfile.mkdtemp(prefix="ha-drill-metrics-")
    # Migrated already; bin/serve starts only with the release's static files and catalogue.
    subprocess.run([str(ROOT / "bin" / "release"), "--assets-only"], cwd=ROOT, env=env,
                   check=True)
    server = start([str(ROOT / "bin" / "serve")], {**env, "PROMETHEUS_MULTIPROC_DIR": metrics},
                   "ha-drill-serve.log")
    processes = [server,
                 start([*manage, "relay_outbox", "--exchange", exchange], env,
                       "ha-drill-relay.log"),
                 start([*manage, "scan_leases", "--loop", "--interval", "1", "--quiet"], env,
                       "ha-drill-scanner.log"),
                 start([*manage, "consume_facts", "--client", facts_client, "--exchange",
                        facts_exchange, "--queue", facts_exchange], env, "ha-drill-consumer.log")]
    try:
        wait_ready(server, port, seconds=60)
        progress("server ready; clients start")
        stop = threading.Event()
        clients = [Client(port, key, batch, stop) for batch in batches]
        for client in clients:
            client.start()
        publish_fact(channel, facts_exchange, "drill-before")
        # Mid-run: every client has had a command answered before the primary dies.
        warm_until = time.monotonic() + COMMAND_DEADLINE_SECONDS
        while not all(c.acknowledged for c in clients) and time.monotonic() < warm_until:
            time.sleep(0.1)
        time.sleep(args.before)
        primary = subprocess.run([HA_CLUSTER, "primary"], check=True, capture_output=True,
                                 text=True).stdout.strip()
        crashed_at = time.monotonic()
        subprocess.run([HA_CLUSTER, "crash", primary], check=True)
        crash_took = time.monotonic() - crashed_at
        failover: dict = {}
        probe = threading.Thread(target=time_to_read_write, args=(url, crashed_at, failover))
        probe.start()
        progress(f"crashed {primary}")
        resumed = {}
        deadline = crashed_at + COMMAND_DEADLINE_SECONDS
        while len(resumed) < len(clients) and time.monotonic() < deadline:
            for index, client in enumerate(clients):
                when = client.first_success_after(crashed_at)
                if when is not None:
                    resumed.setdefault(index, when)
            if any(c.failure for c in clients):
                break
            time.sleep(0.05)
        progress(f"{len(resumed)} clients served again")
        time.sleep(args.after)
        probe.join()
        # The crashed node back as the secondary, the clients writing all along.
        rejoin_started = time.monotonic()
        rejoin = subprocess.run([HA_CLUSTER, "rejoin", primary], capture_output=True, text=True,
                                timeout=300)
        rejoin_ended = time.monotonic()
        if rejoin.returncode != 0:
            sys.exit(f"bin/ha-cluster rejoin failed:\n{rejoin.stdout}\n{rejoin.stderr}")
        progress(rejoin.stdout.strip())
        # A lease made after the failover, let expire: the scanner loop must release it.
        scanner = Client(port, key, [], stop)
        scanner.post(scanner_coupon, "lock", {"order_id": "drill-scan", "user_id": "drill",
                                              "order_amount": "300.00", "lease_seconds": 1})
        publish_fact(channel, facts_exchange, "drill-after")
        stop.set()
        for client in clients:
            client.join(timeout=COMMAND_DEADLINE_SECONDS)
        acknowledged = [entry for c in [*clients, scanner] for entry in c.acknowledged]
        released = wait_until(lambda: UserCoupon.objects.get(pk=scanner_coupon).status
                              == "AVAILABLE", 30)
        published = wait_until(
            lambda: not OutboxEvent.objects.filter(published_at__isnull=True).exists(), 30)
        progress("clients stopped; waiting for the relay, the scanner and the consumer")
        consumed = wait_until(lambda: InboxMessage.objects.filter(
            message_id__in=["drill-before", "drill-after"]).count() == 2, 30)
        answers = sum((c.answers for c in [*clients, scanner]), Counter())
        report = {
            "new_primary": subprocess.run([HA_CLUSTER, "primary"], capture_output=True,
                                          text=True).stdout.strip(),
            "crashed": primary,
            "failover_s": failover.get("failover_s"),
            "rejoin_s": round(rejoin_ended - rejoin_started, 2),
            "rejoined_with": rejoin.stdout.strip().split()[-1],
            "acknowledged_during_rejoin": sum(
                1 for *_, when in acknowledged if rejoin_started <= when <= rejoin_ended),
            "load_average": [round(load, 1) for load in os.getloadavg()],
            "unavailable_s": round(longest_silence(acknowledged, crashed_at), 2),
            "all_resumed_s": round(max(resumed.values(), default=deadline) - crashed_at, 2),
            "crash_took_s": round(crash_took, 2),
            # When commands were answered, in seconds from the crash: the outage is the gap.
            "answered_at_s": [round(when - crashed_at, 1) for when in
                              sorted(entry[3] for entry in acknowledged)],
            "clients_resumed": len(resumed),
            "answers": dict(answers),
            "errors": sum(n for status, n in answers.items() if status != "200"),
            "client_failures": [c.failure for c in clients if c.failure],
            "scanner_released": released,
            "facts_consumed": consumed,
            "unpublished": 0 if published
            else OutboxEvent.objects.filter(published_at__isnull=True).count(),
        }
        touched = {entry[0] for entry in acknowledged}
        report.update(verify(acknowledged, touched | {scanner_coupon}))
        report["missing_on_nodes"] = missing_on_nodes(url, [entry[2] for entry in acknowledged])
        report["processes_alive"] = {name: process.poll() is None for name, process in
                                     zip(("server", "relay", "scanner", "consumer"), processes,
                                         strict=True)}
        return report
    finally:
        stop_all(processes)
        shutil.rmtree(metrics, ignore_errors=True)


def main() -> None:
    args = parse_args()
    url = os.environ.get("HA_DATABASE_URL") or subprocess.run(
        [HA_CLUSTER, "url"], check=True, capture_output=True, text=True).stdout.strip()
    progress("migrating")
    setup_django(url)  # migrates, through the multi-host URL
    # The database writes the journal once its roles and triggers are set up, as bin/serve
    # does after every migrate; the drill's own writes run as the owner.
    os.environ.setdefault("COUPON_APP_DB_PASSWORD", "ha-drill-only-app-role-password")
    from django.core.management import call_command
    call_command("setup_db_roles", verbosity=0)
    progress("migrated")
    # The relay's exchange, and the facts' one: its queue (the exchange's name) is the
    # consumer's, bound here already so a fact published before the consumer binds is kept.
    with scratch_exchange("ha-drill") as (_, exchange), \
            scratch_exchange("ha-drill-facts", extra_queues=(".dead",)) as facts:
        report = drill(args, url, exchange, facts)
    print(json.dumps(report))


if __name__ == "__main__":
    main()

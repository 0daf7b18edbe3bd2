"""Benchmark the commands against the database's own speed, and the lookups at scale.

Rerun (PostgreSQL; a few minutes at the default sizes on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_commands.py --coupons 200000

`--smoke` runs every part with tiny sizes in well under a minute (the test suite does, to show
the script works; its figures mean nothing). The script never touches the database
DATABASE_URL names: it creates a throwaway one (`coupon_bench_commands` unless --db-name),
migrates it and drops it at the end, and one for pgbench (`<db-name>_pgbench`). One run
measures:

  1. the LOCK + REDEEM cycle, a fresh coupon and a fresh Idempotency-Key per command, at 1
     and 16 clients, each way for --seconds:
       pgbench       `pgbench -b simple-update` on its own database
       (scripts/benchmarks/bench_pgbench.py):
                     the database's floor for a small write transaction, in tps;
       hand-written  psycopg, no Django (scripts/benchmarks/bench_hand_written.py), one process per
                     client: what the application's command sends (coupons.write), the same
                     rows in the same two statements per transaction: the claim of the key with
                     the row lock, then the compare-and-set, the command's rows, the ledger row,
                     the journal entries of the evidence rows, the outbox row and the stored
                     answer in one data-modifying WITH; no keyed chain (no HMAC);
       services      the same through coupons.services in-process, as api.commands runs it
                     (claim, command, answer in one transaction) minus the HTTP layer: forked
                     processes, one per client, and (services threads) threads of one process,
                     one per client, sharing its interpreter as a server process does;
       HTTP          POST /lock then /redeem, clients as processes, one keep-alive connection
                     each, through each server of --servers (scripts/benchmarks/bench_servers.py;
                     the default is bin/serve as deployed, --workers x --threads), each started
                     for its own turn and warmed first;
     in --rounds alternating rounds (the order of the ways rotates each round, so the machine's
     other load falls on all of them alike), printing one table: commands/s with the ratio to
     the hand-written cycle of the same run, p50 / p99 per command, CPU ms per command of the
     processes that run each way's code (for HTTP: the server's workers, not the load
     generator) at each client count, statements per command (BEGIN and COMMIT included), and
     the load average at the start and the end;
  2. the lease scanner against the one-by-one loop (scripts/benchmarks/bench_scan_leases.py's runs);
  3. `GET /coupons?user_id=` and `?order_id=` (an order that no longer holds its coupon) with
     --coupons coupons bulk-loaded by generate_series, p50 / p95 over --lookups requests;
  4. the timeline and the check of a coupon with --ledger-rows ledger rows: time and queries.
"""

import argparse
import http.client
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from decimal import Decimal

import bench_pgbench as pgbench
import bench_scan_leases as scan_bench  # its scanner runs
import bench_servers
from bench_hand_written import ORDER_AMOUNT, hand_written_client, raw_lock, raw_redeem
from bench_setup import ROOT, load_average, throwaway_database

CLIENT_COUNTS = (1, 16)
PARTS = ("scanner", "cycles", "history", "lookups")
SMOKE = {"seconds": 0.5, "rounds": 1, "pool": 30, "leases": 20, "coupons": 2000, "lookups": 5,
         "ledger_rows": 20, "workers": 1, "threads": 2, "pgbench_scale": 1,
         "servers": ["bin/serve", "gunicorn:1x2"]}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per way and client count")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating rounds, each --seconds / --rounds per way and count")
    parser.add_argument("--pool", type=int, default=3000,
                        help="coupons ready per client and run (a run stops early without)")
    parser.add_argument("--leases", type=int, default=2000, help="expired leases per scan")
    parser.add_argument("--coupons", type=int, default=1_000_000, help="coupons for lookups")
    parser.add_argument("--lookups", type=int, default=200, help="requests per lookup kind")
    parser.add_argument("--ledger-rows", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=4, help="bin/serve's worker processes")
    parser.add_argument("--threads", type=int, default=4, help="bin/serve's threads per worker")
    parser.add_argument("--servers", type=lambda given: given.split(","), default=["bin/serve"],
                        help="the HTTP ways, comma-separated: bin/serve or NAME:WxT "
                             "(scripts/benchmarks/bench_servers.py)")
    parser.add_argument("--port", type=int, default=0,
                        help="the first server's port, the next one's +1 (0: any free port)")
    parser.add_argument("--pgbench-scale", type=int, default=4, help="pgbench -i -s")
    parser.add_argument("--db-name", default="coupon_bench_commands",
                        help="throwaway PostgreSQL database, created and dropped by this script")
    parser.add_argument("--parts", type=lambda given: set(given.split(",")), default=PARTS,
                        help="which parts to run, comma-separated: " + ",".join(PARTS))
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: shows it works")
    args = parser.parse_args()
    if args.smoke:
        for name, value in SMOKE.items():
            setattr(args, name, value)
    for spec in args.servers:
        bench_servers.parse(spec)  # a wrong spec stops the run before anything is set up
    return args


# --- the coupons a cycle consumes ----------------------------------------------------------


def bulk_coupons(template_id: int, n: int, user_of: str) -> tuple[int, int]:
    """n AVAILABLE coupons in one INSERT; `user_of` is SQL over the series value i. Answers
    the id range. No ISSUE ledger rows: the commands read the ledger head either way."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            f"""INSERT INTO coupons_usercoupon (user_id, template_id, template_version_id, status,
                    state_version, issued_at, updated_at)
                SELECT {user_of}, t.id, v.id, 'AVAILABLE', 1, now(), now()
                FROM generate_series(1, %s) AS i, coupons_coupontemplate t
                JOIN coupons_coupontemplateversion v
                  ON v.template_id = t.id AND v.version = t.version
                WHERE t.id = %s
                RETURNING id""",  # noqa: S608 - user_of is this script's own SQL
            [n, template_id])
        ids = [row[0] for row in cursor.fetchall()]
    return min(ids), max(ids)


# --- one client's loop, in its own process --------------------------------------------------


def services_lock(coupon_id: int, order_id: str):
    """A LOCK as api.commands.run_command runs it, without HTTP: claim, command,
    answer in one transaction."""
    from coupons.services import coupon_lock

    return _run_keyed(lambda ctx: coupon_lock(coupon_id=coupon_id, order_id=order_id,
                                              user_id="bench", order_amount=ORDER_AMOUNT,
                                              ctx=ctx))


def services_redeem(coupon_id: int, order_id: str, locked) -> None:
    from coupons.services import LeaseProof, coupon_redeem

    lease = LeaseProof.from_token(order_id=order_id, lock_token=locked.lock_token,
                                  expected_version=locked.state_version)
    _run_keyed(lambda ctx: coupon_redeem(coupon_id=coupon_id, lease=lease,
                                         payment_id=f"pay-{coupon_id}", ctx=ctx))


def _run_keyed(command):
    from coupons.write.idempotency import run_once

    key, made = uuid.uuid4().hex, []
    answer = run_once(scope="bench", key=key, request_hash=key, actor="bench",
                      command=lambda ctx: made.append(command(ctx)) or made[-1].payload())
    if answer.refusal is not None:
        raise answer.refusal
    return made[-1]  # the result; its payload is the stored answer, as over the API


def services_client(coupon_ids, deadline, *_):
    latencies = []
    for coupon_id in coupon_ids:
        if time.monotonic() >= deadline:
            break
        started = time.monotonic()
        locked = services_lock(coupon_id, f"svc-{coupon_id}")
        middle = time.monotonic()
        services_redeem(coupon_id, f"svc-{coupon_id}", locked)
        latencies += [middle - started, time.monotonic() - middle]
    return latencies


def http_client(coupon_ids, deadline, port, api_key):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Token {api_key}", "Content-Type": "application/json",
               "X-Forwarded-Proto": "https"}

    def post(path, body):
        connection.request("POST", f"/api/v1/coupons/{path}", json.dumps(body),
                           {**headers, "Idempotency-Key": uuid.uuid4().hex})
        response = connection.getresponse()
        answer = json.loads(response.read())
        if response.status != 200:
            raise RuntimeError(f"{path}: {response.status} {answer}")
        return answer

    latencies = []
    for coupon_id in coupon_ids:
        if time.monotonic() >= deadline:
            break
        started = time.monotonic()
        order = f"http-{coupon_id}"
        locked = post(f"{coupon_id}/lock", {"order_id": order, "user_id": "bench",
                                            "order_amount": str(ORDER_AMOUNT)})
        middle = time.monotonic()
        post(f"{coupon_id}/redeem", {"order_id": order, "lock_token": locked["lock_token"],
                                     "expected_version": locked["state_version"],
                                     "payment_id": f"pay-{coupon_id}"})
        latencies += [middle - started, time.monotonic() - middle]
    connection.close()
    return latencies


def services_threads_client(coupon_ids, deadline, clients):
    """services_client in `clients` threads of one process, each with its own connection:
    as one server process runs commands, sharing its interpreter (and its GIL)."""
    import threading

    from django.db import connections

    latencies = []

    def one(ids):
        try:
            latencies.extend(services_client(ids, deadline))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=one, args=(coupon_ids[c::clients],))
               for c in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


CLIENTS = {"hand-written": hand_written_client, "services": services_client,
           "services threads": services_threads_client, "HTTP": http_client}


def _client_process(way, coupon_ids, seconds, extra, start_line, results):
    from django.db import connections

    try:
        start_line.wait()
        started, cpu = time.monotonic(), time.process_time()
        latencies = CLIENTS[way](coupon_ids, started + seconds, *extra)
        results.put((latencies, started, time.monotonic(), time.process_time() - cpu, None))
    except Exception as error:  # noqa: BLE001 - reported by the parent, which stops the run
        results.put(([], 0.0, 0.0, 0.0, repr(error)))
    finally:
        connections.close_all()


def run_clients(way, clients, coupon_range, seconds, extra) -> dict:
    """One cell of one round: `clients` processes for `seconds` (for "services threads" one
    process of `clients` threads); answers the commands, the wall time, every latency and the
    client processes' CPU seconds."""
    from django.db import connections

    ids = range(coupon_range[0], coupon_range[1] + 1)
    per_client = [ids[c::clients] for c in range(clients)]
    if way == "services threads":  # one process, its threads split the coupons
        per_client, extra = [ids], (clients,)
    connections.close_all()  # no connection may cross a fork
    context = multiprocessing.get_context("fork")
    start_line, results = context.Barrier(len(per_client)), context.Queue()
    processes = [context.Process(target=_client_process,
                                 args=(way, ids, seconds, extra, start_line, results))
                 for ids in per_client]
    for process in processes:
        process.start()
    finished = [results.get(timeout=seconds + 300) for _ in processes]
    for process in processes:
        process.join()
    errors = [error for *_, error in finished if error]
    if errors:
        sys.exit(f"{way} at {clients} clients failed: {errors[0]}")
    latencies = [lat for lats, *_ in finished for lat in lats]
    wall = max(end for _, _, end, _, _ in finished) - min(start for _, start, *_ in finished)
    return {"commands": len(latencies), "wall": wall, "latencies": latencies,
            "cpu": sum(cpu for *_, cpu, _ in finished)}


def percentile(sorted_values, p) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))] * 1000


# --- the cycles: every way, in alternating rounds -----------------------------------------


def way_names(args) -> list[str]:
    return ["pgbench", "hand-written", "services", "services threads",
            *(f"HTTP {spec}" for spec in args.servers)]


def server_env(database_url) -> dict:
    """What every server is started with (bin/serve adds its own, bench_servers the same)."""
    return {**os.environ, "DATABASE_URL": database_url, "PYTHON": sys.executable,
            "SERVE_MIGRATE": "0", "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "DJANGO_BEHIND_TLS_PROXY": "1", "TRUSTED_PROXY_ADDRESSES": "127.0.0.1",
            "API_THROTTLE_SERVICE_CLIENT": "1000000/min",
            # A throwaway database this script created and owns: no app role to serve as.
            "ALLOW_DB_OWNER_LOGIN": "1"}


def bench_cycles(args, database_url, template_id) -> None:
    from django.conf import settings

    from coupons.services import service_client_create

    _, api_key = service_client_create(name="bench", capabilities=["lock_coupon", "redeem_coupon"])
    secret = next(iter(settings.LEASE_TOKEN_SECRETS.values()))
    env = server_env(database_url)
    # Migrated already; bin/serve starts only with the release's static files and catalogue.
    subprocess.run([str(ROOT / "bin" / "release"), "--assets-only"], cwd=ROOT, env=env,
                   check=True)
    ways = way_names(args)
    cells = {(way, clients): {"commands": 0, "wall": 0.0, "latencies": [], "cpu": 0.0}
             for way in ways for clients in CLIENT_COUNTS}
    loads = [load_average()]

    def measure(way, clients, run):
        cell = cells[(way, clients)]
        for name in ("commands", "wall", "cpu"):
            cell[name] += run[name]
        cell["latencies"] += run["latencies"]

    def pool(clients):
        return bulk_coupons(template_id, clients * args.pool, "'bench'")

    seconds = args.seconds / args.rounds
    with pgbench.pgbench_database(database_url, f"{args.db_name}_pgbench",
                                  args.pgbench_scale) as pgbench_url:
        # Alternating rounds: each round runs every way at every client count, the ways in a
        # rotated order, so a change in the machine's other load falls on every way alike.
        # A server runs only for its own way's turn, started and warmed before it.
        for round_number in range(args.rounds):
            shift = round_number % len(ways)
            for way in ways[shift:] + ways[:shift]:
                if way == "pgbench":
                    for clients in CLIENT_COUNTS:
                        measure(way, clients, pgbench.run(pgbench_url, clients, seconds))
                elif way.startswith("HTTP "):
                    http_cells(args, way, env, api_key, pool, measure, seconds)
                else:
                    extra = (database_url, secret) if way == "hand-written" else ()
                    for clients in CLIENT_COUNTS:
                        measure(way, clients, run_clients(way, clients, pool(clients), seconds,
                                                          extra))
    loads.append(load_average())
    statements = statements_per_command(template_id, database_url, secret, api_key)
    print_cycles(args, ways, cells, statements, loads)


def http_cells(args, way, env, api_key, pool, measure, seconds) -> None:
    """One round of one server: started, warmed (not measured: every worker thread's first
    requests, its imports, pooled connections and cached client, would count as the first
    cell's CPU), then every client count."""
    spec = way.removeprefix("HTTP ")
    port = args.port + args.servers.index(spec) if args.port else free_port()
    with bench_servers.serving(spec, env, port, args.workers, args.threads) as server:
        warm = args.workers * args.threads
        run_clients("HTTP", warm, pool(warm), min(seconds, 2.0), (port, api_key))
        for clients in CLIENT_COUNTS:
            ids = pool(clients)
            cpu = bench_servers.worker_cpu_seconds(server.pid)
            run = run_clients("HTTP", clients, ids, seconds, (port, api_key))
            run["cpu"] = bench_servers.worker_cpu_seconds(server.pid) - cpu
            measure(way, clients, run)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def print_cycles(args, ways, cells, statements, loads) -> None:
    for cell in cells.values():
        cell["rate"] = cell["commands"] / cell["wall"] if cell["wall"] else 0.0
        cell["latencies"].sort()
    print(f"\nLOCK + REDEEM, one command = one transaction with its Idempotency-Key "
          f"(pgbench: one simple-update transaction); {args.seconds:g} s per cell in "
          f"{args.rounds} alternating rounds; bin/serve {args.workers} workers x "
          f"{args.threads} threads")
    print(f"load average {loads[0]} at the start, {loads[1]} at the end, on "
          f"{os.cpu_count()} CPUs (other work on the machine moves the rates and latencies; "
          f"compare within this table)")
    heads = [WAY_HEADS.get(way, way) for way in ways]
    print(f"\n| | {' | '.join(heads)} |")
    print("|---" * (len(ways) + 1) + "|")
    for clients in CLIENT_COUNTS:
        raw = cells[("hand-written", clients)]["rate"] or float("nan")
        label = f"{clients} client{'s' if clients > 1 else ''}"
        print(f"| commands/s (x hand-written), {label} | " + " | ".join(
            f"{cells[(way, clients)]['rate']:,.0f} ({cells[(way, clients)]['rate'] / raw:.2f}x)"
            for way in ways) + " |")
        print(f"| p50 / p99 ms per command, {label} | " + " | ".join(
            f"{percentile(cells[(way, clients)]['latencies'], 50):.1f} / "
            f"{percentile(cells[(way, clients)]['latencies'], 99):.1f}" for way in ways) + " |")
        print(f"| CPU ms per command, {label} | " + " | ".join(
            f"{cells[(way, clients)]['cpu'] * 1000 / max(cells[(way, clients)]['commands'], 1):.2f}"
            for way in ways) + " |")
    print("| statements per command, LOCK / REDEEM | " + " | ".join(
        statements["HTTP" if way.startswith("HTTP ") else way] for way in ways) + " |")
    print("(statements: BEGIN and COMMIT included, as tests/api/test_statement_counts.py counts "
          "them; CPU: the processes that run each way's code: pgbench, the hand-written and "
          "services clients, for HTTP the server's workers without the load generator)")


WAY_HEADS = {"pgbench": "pgbench simple-update (tps)", "hand-written": "hand-written",
             "services": "services in-process (processes)",
             "services threads": "services in-process (threads)"}


def statements_per_command(template_id, database_url, secret, api_key) -> dict:
    """LOCK's and REDEEM's statements, one cycle each way. HTTP goes through the WSGI handler
    the servers call, in this process, so the server's statements are the ones counted (the
    same for every server)."""
    import psycopg
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    class Counting(psycopg.Cursor):
        executed = 0

        def execute(self, *args, **kwargs):
            Counting.executed += 1
            return super().execute(*args, **kwargs)

    from coupons.services import CommandContext, coupon_issue

    first, _ = bulk_coupons(template_id, 1, "'bench'")
    # Issued, not bulk-loaded: with an ISSUE row the ledger head comes with the row lock.
    issued = [coupon_issue(template_id=template_id, user_id="bench",
                           ctx=CommandContext(actor="bench")).coupon.pk for _ in range(4)]
    counts = {"pgbench": f"{pgbench.statements()} (one transaction)"}
    # One connection throughout, as a pooled server keeps it: a new one per request would
    # count its set-up statements as the command's.
    connection.settings_dict["CONN_MAX_AGE"] = None
    with psycopg.connect(database_url, cursor_factory=Counting) as conn:
        token = raw_lock(conn, first, secret)
        lock = Counting.executed + 2  # its BEGIN and COMMIT
        raw_redeem(conn, first, token)
        counts["hand-written"] = f"{lock} / {Counting.executed + 4 - lock}"
    post = wsgi_poster(api_key)

    def http_lock(coupon_id, order_id):
        return post(f"{coupon_id}/lock", {"order_id": order_id, "user_id": "bench",
                                          "order_amount": str(ORDER_AMOUNT)})

    def http_redeem(coupon_id, order_id, locked):
        post(f"{coupon_id}/redeem", {"order_id": order_id, "lock_token": locked["lock_token"],
                                     "expected_version": locked["state_version"],
                                     "payment_id": f"pay-{coupon_id}"})

    for way, coupon_ids, (lock_of, redeem_of) in (
            ("services", issued[:2], (services_lock, services_redeem)),
            ("HTTP", issued[2:], (http_lock, http_redeem))):
        # The second cycle is counted: the first one's process-wide warm-up (the service
        # client read before it is cached, say) is not what each command costs.
        for coupon_id in coupon_ids:
            order_id = f"count-{coupon_id}"
            with CaptureQueriesContext(connection) as lock:
                locked = lock_of(coupon_id, order_id)
            with CaptureQueriesContext(connection) as redeem:
                redeem_of(coupon_id, order_id, locked)
        counts[way] = f"{len(lock)} / {len(redeem)}"
    counts["services threads"] = counts["services"]  # the same code, in threads
    return counts


def wsgi_poster(api_key):
    """POSTs through Django's WSGI handler in this process, as the servers call it."""
    import io

    from django.core.handlers.wsgi import WSGIHandler

    handler = WSGIHandler()

    def post(path, body):
        data = json.dumps(body).encode()
        environ = {"REQUEST_METHOD": "POST", "PATH_INFO": f"/api/v1/coupons/{path}",
                   "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "443", "HTTP_HOST": "127.0.0.1",
                   "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(data)),
                   "HTTP_AUTHORIZATION": f"Token {api_key}", "REMOTE_ADDR": "127.0.0.1",
                   "HTTP_IDEMPOTENCY_KEY": uuid.uuid4().hex,
                   "wsgi.input": io.BytesIO(data), "wsgi.url_scheme": "https",
                   "wsgi.errors": sys.stderr}
        status = []
        answer = b"".join(handler(environ, lambda given, headers: status.append(given)))
        if not status[0].startswith("200"):
            raise RuntimeError(f"{path}: {status[0]} {answer[:300]!r}")
        return json.loads(answer)

    return post


def bench_scanner(args) -> None:
    from django.utils import timezone

    from coupons.clock import FrozenClock, use_clock
    from coupons.services import template_create

    n = args.leases
    with use_clock(FrozenClock(timezone.now().replace(microsecond=0))) as clock:
        template = template_create(
            code="scan", name="scan 30 off", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
            min_order_amount=Decimal("0.00"), valid_days=30,
        )
        scan_bench.in_setup_processes(scan_bench._issue_part, template.pk, n)
        rates = {}
        for label, run in (("scanner", lambda: scan_bench.run_scanner(100)),
                           ("baseline", scan_bench.run_baseline)):
            scan_bench.in_setup_processes(scan_bench._lock_part, label, scan_bench.LEASE)
            clock.advance(seconds=scan_bench.LEASE + 1)
            counts, seconds = run()
            scan_bench.check_all_released(label, n)
            rates[label] = counts["released"] / seconds
    print(f"\nlease scanner, {n} expired leases: batches of 100 {rates['scanner']:,.0f} "
          f"leases/s; one by one {rates['baseline']:,.0f} leases/s "
          f"({rates['scanner'] / rates['baseline']:.1f}x)")


def bench_lookups(args, template_id) -> None:
    """--coupons coupons, five per user; every tenth once locked by an order and released, so
    the order no longer holds it (its lease and order link remain)."""
    from django.db import connection
    from rest_framework.test import APIClient

    from coupons.services import service_client_create

    started = time.monotonic()
    first, last = bulk_coupons(template_id, args.coupons, f"'user-' || (i %% {args.coupons // 5})")
    with connection.cursor() as cursor:
        cursor.execute("""INSERT INTO coupons_couponlock (id, coupon_id, order_id, token_hash,
                          token_key_id, status, locked_at, expires_at, acquired_version, ended_at)
                          SELECT gen_random_uuid(), id, 'order-' || id, md5(id::text), 'k1',
                                 'RELEASED', now(), now(), 2, now()
                          FROM coupons_usercoupon WHERE id BETWEEN %s AND %s AND id %% 10 = 0""",
                       [first, last])
        # Lookup fixtures only: without journal entries, which verify_journal would name.
        cursor.execute("""INSERT INTO coupons_ordercoupon (lock_id, coupon_id, order_id, quote_id,
                          order_amount, discount_amount, template_version_id, created_at)
                          SELECT l.id, l.coupon_id, l.order_id, '', 300, 30,
                                 c.template_version_id, now()
                          FROM coupons_couponlock l JOIN coupons_usercoupon c ON c.id = l.coupon_id
                          WHERE l.order_id LIKE 'order-%%'""")
        cursor.execute("ANALYZE")
    loaded = time.monotonic() - started
    _, key = service_client_create(name="lookups", capabilities=["read_coupons"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    with connection.cursor() as cursor:
        cursor.execute("SELECT order_id FROM coupons_ordercoupon WHERE order_id LIKE 'order-%%' "
                       "ORDER BY random() LIMIT %s", [args.lookups])
        orders = [row[0] for row in cursor.fetchall()]
    users = [f"user-{i * 7919 % (args.coupons // 5)}" for i in range(args.lookups)]
    timings = {}
    for kind, values in (("user_id", users), ("order_id", orders)):
        times = []
        for value in values:
            begun = time.monotonic()
            response = client.get("/api/v1/coupons", {kind: value}, secure=True)
            times.append(time.monotonic() - begun)
            found = response.json()["results"] if response.status_code == 200 else None
            if not found:
                sys.exit(f"coupons?{kind}={value}: {response.status_code} {found}")
        times.sort()
        timings[kind] = (percentile(times, 50), percentile(times, 95))
    print(f"\nlookups among {args.coupons:,} coupons (loaded in {loaded:.0f} s), "
          f"{args.lookups} requests each, in-process API: "
          + "; ".join(f"coupons?{kind}= p50 {p50:.1f} ms, p95 {p95:.1f} ms"
                      for kind, (p50, p95) in timings.items()))


def bench_history(args, template_id) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    from coupons import clock
    from coupons.models import CouponOperation
    from coupons.services import (
        CommandContext,
        LeaseProof,
        coupon_issue,
        coupon_lock,
        coupon_release,
        service_client_create,
    )

    ctx = CommandContext(actor="bench")
    coupon = coupon_issue(template_id=template_id, user_id="history", ctx=ctx).coupon
    for round_number in range((args.ledger_rows - 1) // 2):
        order = f"history-{round_number}"
        locked = coupon_lock(coupon_id=coupon.pk, order_id=order, user_id="history",
                             order_amount=ORDER_AMOUNT, ctx=ctx,
                             lease_until=clock.now() + timedelta(minutes=5))
        coupon_release(coupon_id=coupon.pk, ctx=ctx, reason="bench", lease=LeaseProof.from_token(
            order_id=order, lock_token=locked.lock_token, expected_version=locked.state_version))
    rows = CouponOperation.objects.filter(coupon=coupon).count()
    _, key = service_client_create(name="history", capabilities=["read_coupons"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    figures = []
    for page in ("timeline", "check"):
        times = []
        for _ in range(5):
            with CaptureQueriesContext(connection) as queries:
                begun = time.monotonic()
                response = client.get(f"/api/v1/coupons/{coupon.pk}/{page}", secure=True)
                times.append(time.monotonic() - begun)
            if response.status_code != 200:
                sys.exit(f"{page}: {response.status_code}")
        figures.append(f"{page} {statistics.median(times) * 1000:.0f} ms "
                       f"({len(queries.captured_queries)} queries)")
    print(f"\na coupon with {rows} ledger rows, median of 5: " + "; ".join(figures))


def bench(args, database_url) -> None:
    from django.db import connection

    from coupons.services import template_create

    print(f"database: {connection.settings_dict['NAME']}, created for "
          f"this run and dropped after it")
    if "scanner" in args.parts:
        bench_scanner(args)  # first: its setup locks every AVAILABLE coupon in the database
    template = template_create(
        code="bench", name="bench 30 off", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
        min_order_amount=Decimal("0.00"), valid_days=3650,
    )
    if "cycles" in args.parts:
        bench_cycles(args, database_url, template.pk)
    if "history" in args.parts:
        bench_history(args, template.pk)
    if "lookups" in args.parts:
        bench_lookups(args, template.pk)


def main() -> None:
    args = parse_args()
    started = time.monotonic()
    with throwaway_database(args.db_name):
        bench(args, os.environ["DATABASE_URL"])  # now the throwaway database's URL
    print(f"\ntotal {time.monotonic() - started:.0f}s; load average {load_average()} "
          f"on {os.cpu_count()} CPUs (other work on the machine moves these figures)")


if __name__ == "__main__":
    main()

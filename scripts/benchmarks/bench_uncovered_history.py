"""Benchmark a coupon whose long history no signed head covers: its page, GET /check, and
/healthz while eight views of it run at once.

Rerun (PostgreSQL; a few minutes on a 2-core machine, most of it building the history):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_uncovered_history.py \\
            --ledger-rows 10001 --port 7180

The script never touches the database DATABASE_URL names: it creates a throwaway one
(`coupon_bench_uncovered` unless --db-name), migrates it and drops it at the end. It sets up
the database roles (the sequencer's function needs them) with the test suite's password of the
`coupon_app` login role, which belongs to the whole server.

It builds two coupons on a frozen clock: the baseline, 21 ledger rows through the services, and
the long one, its first 1,001 rows through the services (orders that close, orders paid and
refunded, late redeems refused: tests/timeline/history.py) and the rest as lease after lease
written in bulk, journaled as the services would. A signed head (`sequence_journal`,
`ledger_checkpoint`) covers each coupon's ISSUE and one view of it leaves the check's watermark
there; every later row is written after that head, so none of them is covered: what an
attacker with the app's login can make of any coupon.

Then it starts the server as deployed (bin/serve, --workers x --threads, on --port) and, over
HTTP as a support login and a service client, measures the coupon page and GET /check of each
coupon: p50 and p99 wall-clock milliseconds of --runs requests after one warm-up, the server
workers' CPU milliseconds per request (what other load on the machine moves least), and the
ratios long / baseline. Last, --concurrent views of the long coupon's page at once by the same
support login while /healthz is probed every 50 ms: each view's time, and /healthz's p50 and
worst latency against its latency with the server idle (the ratio). The load average is printed
beside the figures. Targets: page and /check p50 <= 250 ms at 10,001 rows; /healthz never
waits more than 1 s during the views.
"""

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import threading
import time

import bench_servers
import bench_setup
from bench_setup import ROOT, load_average, throwaway_database

HEALTHZ_EVERY_SECONDS = 0.05


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ledger-rows", type=int, default=10_001,
                        help="ledger rows of the long coupon, ISSUE included (odd)")
    parser.add_argument("--runs", type=int, default=11, help="timed requests per figure")
    parser.add_argument("--concurrent", type=int, default=8,
                        help="views of the long coupon's page at once")
    parser.add_argument("--workers", type=int, default=2, help="bin/serve's GUNICORN_WORKERS")
    parser.add_argument("--threads", type=int, default=4, help="bin/serve's GUNICORN_THREADS")
    parser.add_argument("--port", type=int, default=7180)
    parser.add_argument("--db-name", default="coupon_bench_uncovered",
                        help="throwaway PostgreSQL database, created and dropped by this script")
    args = parser.parse_args()
    if args.ledger_rows < 1003 or args.ledger_rows % 2 == 0 or args.runs < 1:
        parser.error("--ledger-rows must be odd and at least 1003, --runs at least 1")
    return args


def setup_django(database_url: str) -> None:
    # The test settings: the test-only signing key, checkpoint directory and app role password.
    bench_setup.setup_django(database_url, settings_module="config.test_settings")


# --- the data ----------------------------------------------------------------------------


def sign_head() -> None:
    """What cron runs: positions for the new journal entries, then a signed head over them."""
    from io import StringIO

    from django.core.management import call_command

    call_command("sequence_journal", stdout=StringIO())
    call_command("ledger_checkpoint", stdout=StringIO())


def build_coupons(ledger_rows: int):
    """(baseline, long): each issued, covered by a signed head at its ISSUE and checked there,
    then given its history, which no head covers."""
    from datetime import UTC, datetime
    from decimal import Decimal
    from io import StringIO

    from django.core.management import call_command
    from django.db import connection

    from coupons.clock import FrozenClock, use_clock
    from coupons.evidence.replay import coupon_check
    from coupons.services import CommandContext, coupon_issue, template_create
    from tests.timeline.history import bulk_history, long_history

    call_command("setup_db_roles", stdout=StringIO())  # the sequencer function
    with use_clock(FrozenClock(datetime(2026, 6, 1, 12, 0, tzinfo=UTC))) as clock:
        template = template_create(
            code="bench-uncovered", name="30 off 200", kind="AMOUNT_OFF",
            face_value=Decimal("30.00"), min_order_amount=Decimal("200.00"), valid_days=3650)
        coupons = [coupon_issue(template_id=template.pk, user_id=f"u-bench-{n}",
                                ctx=CommandContext(actor="bench")).coupon for n in range(2)]
        sign_head()
        for coupon in coupons:
            assert coupon_check(coupon).ok  # the watermark at v1, resting on that head
        baseline = long_history(coupons[0], clock, ledger_rows=21)
        long = long_history(coupons[1], clock, ledger_rows=1001)
        long = bulk_history(long, clock, ledger_rows=ledger_rows)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as autovacuum would, after a bulk load
    return baseline, long


def credentials() -> tuple[str, str]:
    """(a support login's session cookie, a service client's API key)."""
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from coupons.capabilities import CLIENT_GRANTS
    from coupons.services.clients import service_client_create

    user = User.objects.create_user("bench-support")
    user.groups.add(Group.objects.get(name="support"))
    client = Client()
    client.force_login(user)  # a session row in the database the server reads
    _, key = service_client_create(name="bench-reader", capabilities=CLIENT_GRANTS.values())
    return client.cookies["sessionid"].value, key


# --- over HTTP ---------------------------------------------------------------------------


def server_env(database_url: str) -> dict:
    return {**os.environ, "DATABASE_URL": database_url, "PYTHON": sys.executable,
            "SERVE_MIGRATE": "0", "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "DJANGO_BEHIND_TLS_PROXY": "1", "TRUSTED_PROXY_ADDRESSES": "127.0.0.1",
            "API_THROTTLE_SERVICE_CLIENT": "1000000/min", "API_THROTTLE_USER": "1000000/min",
            # A throwaway database this script created and owns: no app role to serve as.
            "ALLOW_DB_OWNER_LOGIN": "1"}


class Http:
    """One keep-alive connection to the server, as a browser or a client pool keeps one."""

    def __init__(self, port: int, headers: dict):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        self.headers = {"X-Forwarded-Proto": "https", **headers}

    def get(self, path: str) -> tuple[int, float]:
        """(status, wall ms) of one GET."""
        started = time.perf_counter()
        self.connection.request("GET", path, headers=self.headers)
        answer = self.connection.getresponse()
        answer.read()
        return answer.status, (time.perf_counter() - started) * 1000


def timed(http_client: Http, path: str, runs: int, server) -> tuple[int, float, float, float]:
    """(status, p50 ms, p99 ms, the server workers' CPU ms per request) of `runs` GETs after
    one warm-up. The CPU figure is the one the machine's other load moves least."""
    status, _ = http_client.get(path)
    cpu = bench_servers.worker_cpu_seconds(server.pid)
    wall = [http_client.get(path)[1] for _ in range(runs)]
    cpu = (bench_servers.worker_cpu_seconds(server.pid) - cpu) * 1000 / runs
    return status, statistics.median(wall), max(wall), cpu


def concurrent_views(port: int, page_headers: dict, path: str, views: int):
    """([each view's ms], [each /healthz probe's ms during them], statuses)."""
    probes, done, results = [], threading.Event(), []

    def probe():
        while not done.is_set():
            probes.append(Http(port, {}).get("/healthz")[1])
            time.sleep(HEALTHZ_EVERY_SECONDS)

    def view():
        results.append(Http(port, page_headers).get(path))

    prober = threading.Thread(target=probe)
    viewers = [threading.Thread(target=view) for _ in range(views)]
    for thread in viewers:
        thread.start()
    prober.start()
    for thread in viewers:
        thread.join()
    done.set()
    prober.join()
    return [ms for _, ms in results], probes, {status for status, _ in results}


def bench(args, database_url: str) -> bool:
    started = time.monotonic()
    baseline, long = build_coupons(args.ledger_rows)
    session, key = credentials()
    print(f"coupons {baseline.pk} ({baseline.state_version} ledger rows) and {long.pk} "
          f"({long.state_version} rows, v2 on covered by no signed head), built in "
          f"{time.monotonic() - started:.1f}s")
    env = server_env(database_url)
    # Migrated already; bin/serve starts only with the release's static files and catalogue.
    subprocess.run([str(ROOT / "bin" / "release"), "--assets-only"], cwd=ROOT, env=env,
                   check=True)
    page_headers = {"Cookie": f"sessionid={session}"}
    api_headers = {"Authorization": f"Token {key}"}
    ok, figures = True, {}
    with bench_servers.serving("bin/serve", env, args.port, args.workers,
                               args.threads) as server:
        print(f"\n{'GET':24} {'ledger rows':>11} {'status':>6} {'p50 ms':>9} {'p99 ms':>9} "
              f"{'CPU ms':>8} {'x baseline (p50, CPU)':>22}")
        for label, headers, path in (("coupon page", page_headers, "/coupons/{}/"),
                                     ("GET /check (API)", api_headers,
                                      "/api/v1/coupons/{}/check")):
            for coupon in (baseline, long):
                status, p50, p99, cpu = timed(Http(args.port, headers), path.format(coupon.pk),
                                              args.runs, server)
                figures[(label, coupon.pk)] = (p50, cpu)
                base = figures[(label, baseline.pk)]
                ratio = (f"{p50 / base[0]:.1f}x, {cpu / max(base[1], 0.1):.1f}x"
                         if coupon is long else "")
                print(f"{label:24} {coupon.state_version:>11,} {status:>6} {p50:>9.1f} "
                      f"{p99:>9.1f} {cpu:>8.1f} {ratio:>22}")
                ok = ok and status == 200
        idle = [Http(args.port, {}).get("/healthz")[1] for _ in range(args.runs)]
        views, probes, statuses = concurrent_views(args.port, page_headers,
                                                   f"/coupons/{long.pk}/", args.concurrent)
        ok = ok and statuses == {200}
    idle_p50 = statistics.median(idle)
    print(f"\n{args.concurrent} views of coupon {long.pk}'s page at once (one support login; "
          f"bin/serve {args.workers} workers x {args.threads} threads): each took "
          f"{min(views):.0f}-{max(views):.0f} ms (p50 {statistics.median(views):.0f})")
    print(f"/healthz meanwhile, {len(probes)} probes: p50 {statistics.median(probes):.1f} ms, "
          f"worst {max(probes):.1f} ms; idle p50 {idle_p50:.1f} ms "
          f"(worst / idle {max(probes) / idle_p50:.0f}x)")
    print(f"(load average {load_average()} on {os.cpu_count()} CPUs; {args.runs} timed runs "
          f"per figure after one warm-up)")
    return ok


def main() -> None:
    args = parse_args()
    with throwaway_database(args.db_name, setup_django):
        ok = bench(args, os.environ["DATABASE_URL"])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

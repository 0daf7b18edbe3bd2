"""Benchmark a restart of bin/serve: seconds from start to the first answer of /healthz.

Rerun (PostgreSQL; the two roles of docs/deploy.md, the owner from DATABASE_URL):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_serve_restart.py --port 8200 --runs 3

It creates a throwaway database (`coupon_bench_serve` unless --db-name), runs the release step
once (bin/release: migrate and setup_db_roles as the owner, collectstatic, compilemessages), then
starts bin/serve --runs times each way on --port, as the application role, the three ways in
turn so that each sees the same load: with SERVE_MIGRATE=1 (the whole release step at every
start), after `bin/release --assets-only` (what every start did before the release step built
the assets: collectstatic and compilemessages), and alone (now: a check of the assets'
fingerprint, then gunicorn). Each instance ends with kill -9 of its process group, so every
start after the first is a start after a crash.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from urllib.parse import urlsplit, urlunsplit

from bench_setup import ROOT, create_postgres_database, drop_postgres_database, load_average

APP_PASSWORD = "test-only-app-role-password"  # the suite's: the role is the cluster's


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--db-name", default="coupon_bench_serve")
    return parser.parse_args()


SERVE = str(ROOT / "bin" / "serve")
WAYS = {
    "migrating and building at every start": ({"SERVE_MIGRATE": "1"}, [SERVE]),
    "building the assets at every start (before)": (
        {}, ["bash", "-c", f'"{ROOT}/bin/release" --assets-only && exec "{SERVE}"']),
    "release step apart (now)": ({}, [SERVE]),
}


def start_seconds(command, env, port) -> float:
    started = time.monotonic()
    server = subprocess.Popen(command, cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        while True:
            if server.poll() is not None:
                raise SystemExit(f"bin/serve exited with {server.returncode}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
                return time.monotonic() - started
            except OSError:
                time.sleep(0.05)
    finally:
        # As a crash ends it (kill -9, no clean shutdown): the next start finds what a killed
        # instance leaves behind, its control socket and metrics files.
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(30)


def main() -> None:
    args = parse_args()
    url = os.environ["DATABASE_URL"]
    owner_url = create_postgres_database(url, args.db_name)
    parts = urlsplit(owner_url)
    app_url = urlunsplit(parts._replace(
        netloc=f"coupon_app:{APP_PASSWORD}@{parts.hostname}:{parts.port or 5432}"))
    env = {"PATH": os.environ["PATH"], "PYTHON": sys.executable,
           "DJANGO_SECRET_KEY": "benchmark-only-secret-key-of-32-bytes-or-more",
           "LEASE_TOKEN_SECRET": "benchmark-only-lease-token-secret-of-32-bytes",
           "IDEMPOTENCY_SEAL_SECRET": "benchmark-only-idempotency-seal-secret-32b",
           "DJANGO_ALLOWED_HOSTS": "127.0.0.1", "DJANGO_HTTPS": "0",
           "MIGRATION_DATABASE_URL": owner_url, "DATABASE_URL": app_url,
           "COUPON_APP_DB_PASSWORD": APP_PASSWORD, "GUNICORN_BIND": f"127.0.0.1:{args.port}"}
    print(f"load average {load_average()} on {os.cpu_count()} CPUs at the start")
    try:
        subprocess.run([str(ROOT / "bin" / "release")], cwd=ROOT, env=env, check=True)
        figures = {name: [] for name in WAYS}
        for _ in range(args.runs):
            for name, (extra, command) in WAYS.items():
                figures[name].append(start_seconds(command, {**env, **extra}, args.port))
    finally:
        drop_postgres_database(url, args.db_name)
    for name, runs in figures.items():
        print(f"{name}: median {statistics.median(runs):.1f}s "
              f"({', '.join(f'{r:.1f}' for r in runs)})")
    *_, before, now = (statistics.median(runs) for runs in figures.values())
    print(f"restart: {before:.1f}s before, {now:.1f}s now ({before / now:.1f}x)")
    print(f"load average {load_average()} on {os.cpu_count()} CPUs at the end")


if __name__ == "__main__":
    main()

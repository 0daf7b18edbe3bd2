"""scripts/benchmarks/bench_commands.py --smoke: every part of the benchmark runs (its figures
mean nothing at these sizes; the README's come from a real run)."""

import os
import subprocess
import sys
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_smoke_run_measures_every_part():
    # DATABASE_URL's server, or else the embedded test cluster (scripts/benchmarks/bench_setup.py).
    env = dict(os.environ)
    name = f"{connection.settings_dict['NAME']}_bench_smoke"
    result = subprocess.run(
        [sys.executable, "scripts/benchmarks/bench_commands.py", "--smoke", "--db-name", name],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    for part in ("| | pgbench simple-update (tps) | hand-written | services in-process (processes) "
                 "| services in-process (threads) | HTTP bin/serve | HTTP gunicorn:1x2 |",
                 "| commands/s (x hand-written), 16 clients |",
                 "| p50 / p99 ms per command, 1 client |", "| CPU ms per command, 16 clients |",
                 "| statements per command, LOCK / REDEEM | 5 (one transaction) | 4 / 4 |",
                 "alternating rounds", "load average",
                 "lease scanner", "coupons?user_id=", "coupons?order_id=", "timeline", "check"):
        assert part in result.stdout, result.stdout

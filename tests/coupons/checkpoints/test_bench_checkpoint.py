"""scripts/bench_checkpoint.py --smoke: every part of the benchmark runs (its figures mean
nothing at these sizes; the README's come from a real run)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_benchmark_smoke_run_measures_every_part():
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    result = subprocess.run([sys.executable, "scripts/bench_checkpoint.py", "--smoke"], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=300)

    assert result.returncode == 0, result.stdout + result.stderr
    for part in ("2,000 coupons: checkpoint", "per 100,000 entries", "again unchanged",
                 "verify", "proof p50", "extrapolated to 1,000,000 coupons"):
        assert part in result.stdout, result.stdout

"""scripts/benchmarks/bench_checkpoint.py --smoke: every part of the benchmark runs (its
figures mean nothing at these sizes; the README's come from a real run)."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_the_benchmark_smoke_run_measures_every_part():
    # On the suite's own server (DATABASE_URL, or the embedded cluster the suite stops at its
    # end): unset, it started an embedded cluster of its own that outlived the suite. A
    # throwaway database of its own name, so that runs side by side do not share one.
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run([sys.executable, "scripts/benchmarks/bench_checkpoint.py", "--smoke",
                             "--db-name", f"coupon_bench_checkpoint_{uuid.uuid4().hex[:12]}"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

    assert result.returncode == 0, result.stdout + result.stderr
    for part in ("2,000 coupons: checkpoint", "per 100,000 entries", "again unchanged",
                 "verify", "proof p50", "extrapolated to 1,000,000 coupons"):
        assert part in result.stdout, result.stdout

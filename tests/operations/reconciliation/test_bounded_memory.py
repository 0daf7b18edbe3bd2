"""Reconciliation holds one batch at a time: its peak memory does not grow with the coupons.

Runs scripts/benchmarks/bench_reconcile.py (a throwaway database, bulk-loaded honest histories with
planted faults) at 1,000 and 10,000 coupons; the script itself fails if the findings are not
exactly the planted ones. A run that kept every coupon would peak about ten times higher.
"""

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_peak_memory_stays_flat_while_the_coupons_grow_tenfold():
    # On the suite's own server (DATABASE_URL, or the embedded cluster the suite stops at its
    # end), in a throwaway database of its own name: unset, it started an embedded cluster of
    # its own that outlived the suite.
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    env.update(DJANGO_SECRET_KEY="test-only-secret-key-of-32-bytes-or-more",
               LEASE_TOKEN_SECRET="test-only-lease-token-secret-of-32-bytes",
               IDEMPOTENCY_SEAL_SECRET="test-only-idempotency-seal-secret-of-32-bytes")
    result = subprocess.run(
        [sys.executable, "scripts/benchmarks/bench_reconcile.py", "--sizes", "1000", "10000",
         "--batch", "200", "--db-name", f"coupon_bench_reconcile_{uuid.uuid4().hex[:12]}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    small, large = (float(mib) for mib in
                    re.findall(r"peak Python memory ([\d.]+) MiB", result.stdout))
    assert large <= small * 1.5 + 0.25, result.stdout

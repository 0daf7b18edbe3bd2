"""What keying the ledger chain costs per row, in process.

Rerun (no database needed; a few seconds):

    .venv/bin/python scripts/bench_keyed_chain.py --rows 20000

Times, for a REDEEM-like ledger row, the unkeyed SHA-256 chain hash (the rule the unkeyed
baseline) and the keyed HMAC-SHA256 chain hash, and prints microseconds per row and the ratio
to the baseline measured in the same run. The statements a command sends are unchanged
(tests/api/test_statement_counts.py pins them): the hash is computed in process and written
with its row.
"""

import argparse
import os
import sys
import time
import uuid
from datetime import UTC, datetime

from bench_setup import ROOT


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SECRET_KEY", "benchmark-only-secret-key")
    os.environ.setdefault("LEASE_TOKEN_SECRET", "benchmark-only-lease-token-secret")
    os.environ.setdefault("LEDGER_CHAIN_KEYS", "b1:benchmark-only-ledger-chain-key-never-use")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from coupons.evidence.ledger_chain import chained_hash, keyed_hash
    from coupons.models import CouponOperation

    now = datetime(2026, 6, 1, 12, tzinfo=UTC)
    lock_id = uuid.UUID(int=7)
    op = CouponOperation(coupon_id=41, op_type="REDEEM", from_state="LOCKED", to_state="USED",
                         from_version=2, to_version=3, actor="client:7", order_id="o-1",
                         lock_id=lock_id, payment_id="p-1", idempotency_key="k" * 36,
                         request_hash="a" * 64, created_at=now)
    prev = "ab" * 32
    ways = {
        "unkeyed SHA-256 chain hash (before)": lambda: chained_hash(op, prev),
        "keyed HMAC chain hash": lambda: keyed_hash(op, prev, "b1"),
    }
    timings = {}
    for name, way in ways.items():
        started = time.perf_counter()
        for _ in range(args.rows):
            way()
        timings[name] = (time.perf_counter() - started) / args.rows * 1e6
    baseline = next(iter(timings.values()))
    for name, micros in timings.items():
        print(f"{name:40} {micros:7.1f} µs/row  ({micros / baseline:.2f}x)")


if __name__ == "__main__":
    main()

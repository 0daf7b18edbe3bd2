"""Benchmark signed checkpoints: time to checkpoint and to verify as coupons grow, per proof.

Rerun (PostgreSQL, the real target; a few minutes on a 2-core machine, most of it loading):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/bench_checkpoint.py           # 10,000 then 100,000 coupons
    .venv/bin/python scripts/bench_checkpoint.py --smoke       # 500 then 2,000, seconds

It never touches the database DATABASE_URL names: it creates a throwaway one
(`coupon_bench_checkpoint`), migrates it and drops it at the end (bench_setup.py).

The coupons are bulk-loaded, not run through the services: each is ISSUED (v1) and every other
one also VOIDED (v2), its ledger rows sealed with the project's chain function, so verification
does all of its real work. At each size it times `ledger_checkpoint` (every chunk new), a second
checkpoint with nothing changed (every chunk already stored), `verify_ledger`'s check of that
checkpoint, and `GET coupons/{id}/proof`'s work for 200 random coupons against a baseline that
rebuilds the whole tree per proof (what a proof costs without the stored chunks). Times at
1,000,000 coupons are extrapolated linearly from the largest size.
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from decimal import Decimal

from bench_setup import load_average, throwaway_database

LOAD_CHUNK = 5000
PROOFS = 200


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--smoke", action="store_true", help="500 and 2,000: seconds")
    parser.add_argument("--db-name", default="coupon_bench_checkpoint")
    args = parser.parse_args()
    if args.smoke:
        args.sizes = [500, 2_000]
    if sorted(args.sizes) != args.sizes or args.sizes[0] < 1:
        parser.error("--sizes must be positive and ascending")
    return args


def load(first: int, last: int, template, now) -> None:
    from django.db import transaction

    from coupons.evidence.ledger_chain import GENESIS, seal
    from coupons.models import CouponOperation, UserCoupon

    version = template.versions.order_by("-id").first()
    for start in range(first, last, LOAD_CHUNK):
        numbers = range(start, min(start + LOAD_CHUNK, last))
        with transaction.atomic():
            coupons = UserCoupon.objects.bulk_create([
                UserCoupon(user_id=f"u{i}", template=template, template_version=version,
                           status="VOIDED" if i % 2 else "AVAILABLE",
                           state_version=2 if i % 2 else 1, valid_from=now,
                           valid_until=now + timedelta(days=30), issued_at=now, updated_at=now)
                for i in numbers])
            ops = []
            for i, coupon in zip(numbers, coupons, strict=True):
                issue = CouponOperation(coupon=coupon, op_type="ISSUE", from_state="",
                                        to_state="AVAILABLE", from_version=0, to_version=1,
                                        actor="bench", created_at=now)
                seal(issue, GENESIS)
                ops.append(issue)
                if i % 2:
                    void = CouponOperation(coupon=coupon, op_type="VOID", from_state="AVAILABLE",
                                           to_state="VOIDED", from_version=1, to_version=2,
                                           actor="bench", reason="bench", created_at=now)
                    seal(void, issue.content_hash)
                    ops.append(void)
            CouponOperation.objects.bulk_create(ops)


def timed(fn):
    started = time.monotonic()
    result = fn()
    return result, time.monotonic() - started


def rebuild_root() -> bytes:
    """The baseline proof: every head read and hashed again, per request."""
    from coupons.evidence import merkle
    from operations.checkpoint import chain_heads

    return merkle.root_of_nodes([merkle.leaf_hash(merkle.head_leaf(*head))
                                 for head in chain_heads()])


def bench(args) -> None:
    from django.db import connection
    from django.utils import timezone

    from coupons.clock import FrozenClock, use_clock
    from coupons.evidence.checkpoint_keys import signing_key
    from coupons.evidence.checkpoint_proofs import coupon_proof
    from coupons.evidence.checkpoint_verify import verify_checkpoint
    from coupons.models import UserCoupon
    from coupons.services import template_create
    from operations.checkpoint import checkpoint_document, ledger_checkpoint

    print(f"database: {connection.settings_dict['NAME']}; "
          f"load average {load_average()}")
    now = timezone.now().replace(microsecond=0)
    public = signing_key().public_key()
    rng = random.Random(15)
    loaded, last = 0, None
    with use_clock(FrozenClock(now)):
        template = template_create(
            code="bench", name="bench 30 off", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
            min_order_amount=Decimal("0.00"), valid_days=30)
        for size in args.sizes:
            _, seconds = timed(lambda a=loaded, b=size: load(a, b, template, now))
            print(f"loaded {size - loaded:,} coupons in {seconds:.1f}s")
            loaded = size
            run, first = timed(ledger_checkpoint)
            again, second = timed(ledger_checkpoint)
            verdict, verify = timed(lambda c=again.checkpoint: verify_checkpoint(
                checkpoint_document(c), public))
            assert verdict.ok, (verdict.problems, dict(verdict.broken))
            ids = list(UserCoupon.objects.values_list("id", flat=True))
            picks = [UserCoupon.objects.get(pk=pk) for pk in rng.sample(ids, PROOFS)]
            per_proof = []
            for coupon in picks:
                proof, seconds = timed(lambda c=coupon: coupon_proof(coupon=c))
                assert proof["leaf"] is not None
                per_proof.append(seconds)
            _, rebuild = timed(rebuild_root)
            p50 = statistics.median(per_proof)
            p95 = sorted(per_proof)[int(len(per_proof) * 0.95) - 1]
            print(f"{size:>9,} coupons: checkpoint {first:.2f}s ({run.chunks_stored} chunks), "
                  f"again unchanged {second:.2f}s ({again.chunks_stored} new chunks), "
                  f"verify {verify:.2f}s; proof p50 {p50 * 1000:.1f} ms p95 {p95 * 1000:.1f} ms "
                  f"vs rebuilding the tree {rebuild * 1000:.0f} ms "
                  f"({rebuild / p50:,.0f}x); load average {load_average()}")
            last = (size, first, second, verify, rebuild)
    size, first, second, verify, rebuild = last
    scale = 1_000_000 / size
    print(f"extrapolated to 1,000,000 coupons (x{scale:g}, linear): checkpoint "
          f"{first * scale:.0f}s, unchanged {second * scale:.0f}s, verify {verify * scale:.0f}s, "
          f"a proof that rebuilt the tree {rebuild * scale:.1f}s; a stored-chunk proof reads "
          f"one checkpoint row and one chunk whatever the size")


def main() -> None:
    args = parse_args()
    # A throwaway database needs no real key: a bench-only one, and a scratch directory.
    os.environ.setdefault("LEDGER_SIGNING_KEY", "YmVuY2gtb25seS1sZWRnZXItc2lnbmluZy1rZXktMzI=")
    with tempfile.TemporaryDirectory(prefix="coupon_bench_checkpoints_") as directory:
        os.environ["LEDGER_CHECKPOINT_DIR"] = directory
        with throwaway_database(args.db_name):
            bench(args)


if __name__ == "__main__":
    sys.exit(main())

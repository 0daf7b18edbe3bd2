"""What verifying the whole history costs: `verify_ledger` over 10,000 and 100,000 coupons.

Rerun (PostgreSQL; a few minutes on a 2-core machine, most of it loading and signing):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        nice .venv/bin/python scripts/benchmarks/bench_verify.py       # 10,000 then 100,000 coupons
    .venv/bin/python scripts/benchmarks/bench_verify.py --smoke        # 500 then 2,000, seconds

In a throwaway database (`coupon_bench_verify`, bench_setup.py). Each coupon is ISSUED (v1) and
every other one also VOIDED (v2): ledger rows bulk-loaded, each journaled by the database
(`declared_bulk_create`, as the scanners write a batch), so every row has its entry and the
log has 1.5 entries a coupon. Then the log is sequenced and signed (`sequence_journal`,
`ledger_checkpoint`), and `verify_ledger --checkpoint FILE` runs as an auditor runs it. Its
parts are timed apart: the journal's log (every position read, every leaf recomputed, every
signed claim) and the fold of every journaled row against its entries. Times at 1,000,000
coupons are linear from the largest size.
"""

import argparse
import io
import json
import os
import sys
import tempfile
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from bench_setup import load_average, throwaway_database

LOAD_CHUNK = 5000


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--smoke", action="store_true", help="500 and 2,000: seconds")
    parser.add_argument("--db-name", default="coupon_bench_verify")
    args = parser.parse_args()
    if args.smoke:
        args.sizes = [500, 2_000]
    if sorted(args.sizes) != args.sizes or args.sizes[0] < 1:
        parser.error("--sizes must be positive and ascending")
    return args


def load(first: int, last: int, template, now) -> None:
    from django.db import transaction

    from coupons.models import CouponOperation, UserCoupon
    from coupons.write.declared import declared_bulk_create

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
                ops.append(issue)
                if i % 2:
                    void = CouponOperation(coupon=coupon, op_type="VOID", from_state="AVAILABLE",
                                           to_state="VOIDED", from_version=1, to_version=2,
                                           actor="bench", reason="bench", created_at=now)
                    ops.append(void)
            declared_bulk_create(ops, actor="bench")


def timed(fn):
    started = time.monotonic()
    result = fn()
    return result, time.monotonic() - started


def bench(args) -> None:
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from coupons.clock import FrozenClock, use_clock
    from coupons.evidence.checkpoint_keys import signing_key
    from coupons.evidence.checkpoint_verify import Verdict, verify_checkpoint
    from coupons.evidence.journal import journal_problems
    from coupons.evidence.journal_verify import read_log, verify_journal
    from coupons.models import LedgerCheckpoint
    from coupons.services import template_create
    from operations.checkpoint import checkpoint_document, ledger_checkpoint

    print(f"database: {connection.settings_dict['NAME']}; load average {load_average()}")
    now = timezone.now().replace(microsecond=0)
    public = signing_key().public_key()
    directory = Path(os.environ["LEDGER_CHECKPOINT_DIR"])
    call_command("setup_db_roles", stdout=io.StringIO())  # the sequencer function
    loaded, last = 0, None
    with use_clock(FrozenClock(now)):
        template = template_create(
            code="bench", name="bench 30 off", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
            min_order_amount=Decimal("0.00"), valid_days=30)
        for size in args.sizes:
            _, seconds = timed(lambda a=loaded, b=size: load(a, b, template, now))
            call_command("sequence_journal", stdout=io.StringIO())
            checkpoint = ledger_checkpoint().checkpoint
            print(f"loaded, sequenced and signed {size - loaded:,} coupons in {seconds:.1f}s "
                  f"(load average {load_average()})")
            loaded = size
            newest = str(directory / f"checkpoint-{checkpoint.number:08d}.json")
            out = io.StringIO()
            _, whole = timed(lambda f=newest, o=out: call_command(
                "verify_ledger", "--checkpoint", f, stdout=o))
            assert " holds: " in out.getvalue(), out.getvalue()
            assert verify_checkpoint(checkpoint_document(checkpoint), public).ok
            log, reading = timed(read_log)
            heads = [json.loads(c.body) for c in LedgerCheckpoint.objects.order_by("number")]
            _, journal = timed(lambda h=heads: verify_journal(h, Verdict()))
            found, folding = timed(lambda: list(journal_problems()))
            assert not found, found[:3]
            print(f"{size:>9,} coupons, {len(log.leaves):,} journal entries: verify_ledger "
                  f"{whole:.2f}s, of which the journal {journal:.2f}s (reading the log "
                  f"{reading:.2f}s, the rows' fold {folding:.2f}s); load average "
                  f"{load_average()}")
            last = (size, whole, journal, folding)
    size, whole, journal, folding = last
    scale = 1_000_000 / size
    print(f"extrapolated to 1,000,000 coupons (x{scale:g}, linear): verify_ledger about "
          f"{whole * scale:.0f}s (the journal {journal * scale:.0f}s of which the fold "
          f"{folding * scale:.0f}s)")


def main() -> None:
    args = parse_args()
    # A throwaway database needs no real key: a bench-only one, and a scratch directory.
    os.environ.setdefault("LEDGER_SIGNING_KEY", "YmVuY2gtb25seS1sZWRnZXItc2lnbmluZy1rZXktMzI=")
    os.environ.setdefault("COUPON_APP_DB_PASSWORD", "benchmark-only-app-role-password")
    with tempfile.TemporaryDirectory(prefix="coupon_bench_verify_") as directory:
        os.environ["LEDGER_CHECKPOINT_DIR"] = directory
        with throwaway_database(args.db_name):
            bench(args)


if __name__ == "__main__":
    sys.exit(main())

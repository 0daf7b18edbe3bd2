"""Benchmark the impact replay: stored refund decisions re-decided per second under a draft.

Rerun (PostgreSQL, the real target; about a minute on a 2-core machine):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_impact_replay.py --decisions 10000

Without DATABASE_URL it runs on the checkout's embedded PostgreSQL cluster. Like
bench_scan_leases.py it never touches the database DATABASE_URL names: it creates a throwaway
database (`coupon_bench_impact` unless --db-name), migrates it and drops it at the end.

It stores N decisions of the default policy v1 (random facts, bulk-inserted: the replay only
reads stored facts), makes a draft v2 with different rules, and times
refunds.impact.policy_impact(draft) (keyset chunks of stored facts, the pure `decide` per row)
three times, printing the best and the rate: the whole history (`sample=0`, what every replay
did once and `preview_policy --all` still does) and the capped replay the console and
the API run (the newest IMPACT_REPLAY_SAMPLE, 10,000), in the same run. An earlier figure:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python scripts/benchmarks/bench_impact_replay.py --decisions 200000

On PostgreSQL the first 2,000 decisions are made in Python and the rest copied from them in one
INSERT ... SELECT over generate_series, so 200,000 take seconds to store.
"""

import argparse
import os
import random
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from bench_setup import ROOT, load_average, throwaway_database

START = datetime(2026, 1, 1, tzinfo=UTC)
RUNS = 3
DRAFT_RULES = [
    {"label": "Exchange coupons stay used", "when": {"template_kind": ["EXCHANGE"]},
     "action": "KEEP_USED"},
    {"label": "Risk-flagged refunds are reviewed", "when": {"risk_flag": True},
     "action": "MANUAL_REVIEW"},
    {"label": "Half refunded within 14 days returns",
     "when": {"refunded_share_min": "0.5", "days_since_redemption_max": 14}, "action": "RETURN"},
    {"label": "Otherwise the coupon stays used", "when": {}, "action": "KEEP_USED"},
]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=10000, help="stored decisions (N)")
    parser.add_argument("--db-name", default="coupon_bench_impact",
                        help="throwaway PostgreSQL database, created and dropped by this script")
    args = parser.parse_args()
    if args.decisions < 1:
        parser.error("--decisions must be at least 1")
    return args


def store_history(n: int):
    """N decided refunds under default v1; answers the draft v2 to preview."""

    from coupons.clock import FrozenClock, use_clock
    from coupons.services import CommandContext, coupon_issue, template_create
    from refunds.models import RefundCoupon, ReturnPolicy, ReturnPolicyVersion
    from refunds.policy_engine import RefundFacts, decide
    from refunds.services.policies import policy_draft_create, policy_draft_update

    rng = random.Random(7)
    with use_clock(FrozenClock(START)):
        template = template_create(code="bench", name="bench", kind="AMOUNT_OFF",
                                   face_value=Decimal("30.00"), valid_days=30)
        coupon = coupon_issue(template_id=template.pk, user_id="u1",
                              ctx=CommandContext(actor="bench")).coupon
        v1 = ReturnPolicyVersion.objects.get(policy__code="default", number=1)
        rows = []
        for i in range(min(n, 2000)):
            share = Decimal(rng.randint(1, 100)) / 100
            facts = RefundFacts(
                refund_type="FULL" if share == 1 or rng.random() < 0.3 else "PARTIAL",
                refunded_share=share, coupon_expired=rng.random() < 0.2,
                template_kind=rng.choice(["AMOUNT_OFF", "PERCENT_OFF", "EXCHANGE"]),
                template_returnable=rng.random() < 0.9, campaign_closed=rng.random() < 0.1,
                risk_flag=rng.random() < 0.05, days_since_redemption=rng.randint(0, 60),
                face_value=Decimal("30.00"),
            )
            verdict = decide(v1, facts)
            rows.append(RefundCoupon(
                refund_id=f"bench-{i}", order_id=f"order-{i}", coupon=coupon,
                refund_type=facts.refund_type, refund_amount=Decimal("10.00"),
                status=RefundCoupon.Status.DECIDED, created_by="bench",
                received_at=START + timedelta(minutes=i), decided_at=START,
                facts=facts.as_json(), policy_version=v1, action=verdict.action,
                rule_index=verdict.rule_index, rule_label=verdict.rule_label,
                requires_approval=verdict.requires_approval,
            ))
        base = min(n, 2000)
        RefundCoupon.objects.bulk_create(rows[:base], batch_size=1000)
        if n > base:
            copy_in_sql(base, n - base)
        draft = policy_draft_create(ReturnPolicy.objects.get(code="default"), "bench")
        return policy_draft_update(draft, DRAFT_RULES, "bench")


def copy_in_sql(base: int, extra: int) -> None:
    """`extra` more decisions, copies of the first `base` with their own ids and later times."""
    from django.db import connection

    from refunds.models import RefundCoupon

    columns = [f.column for f in RefundCoupon._meta.get_fields()
               if f.concrete and not f.many_to_many and not f.primary_key]
    made = {"refund_id": "r.refund_id || '-' || g", "order_id": "r.order_id || '-' || g",
            "received_at": f"r.received_at + g * interval '1 minute' * {base}"}
    select = ", ".join(made.get(column, f"r.{column}") for column in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {RefundCoupon._meta.db_table} ({', '.join(columns)}) "
            f"SELECT {select} FROM {RefundCoupon._meta.db_table} r "
            f"CROSS JOIN generate_series(1, %s) g ORDER BY g, r.id LIMIT %s",
            [extra // base + 1, extra])


def bench(args) -> None:

    from refunds.impact import policy_impact

    started = time.monotonic()
    draft = store_history(args.decisions)
    print(f"stored {args.decisions} decisions in {time.monotonic() - started:.1f}s "
          f"(a throwaway database)")
    bests = {}
    for name, sample in (("whole history (uncapped)", 0),
                         ("capped (console and API)", None)):
        timings = []
        for _ in range(RUNS):
            began = time.perf_counter()
            report = policy_impact(draft, sample=sample)
            timings.append(time.perf_counter() - began)
        bests[name] = best = min(timings)
        print(f"{name}: replayed {report['decisions']} stored decisions under default v2 "
              f"(draft), {report['changed']} would change, sampled={report['sampled']}")
        print(f"  best of {RUNS}: {best:.2f}s = {report['decisions'] / best:,.0f} decisions/s "
              f"(runs: {', '.join(f'{t:.2f}s' for t in timings)})")
    full, capped = bests.values()
    print(f"capped / whole: {capped / full:.3f}")


def main() -> None:
    args = parse_args()
    os.chdir(ROOT)
    with throwaway_database(args.db_name):
        bench(args)
    print(f"load average {load_average()} on {os.cpu_count()} CPUs "
          "(other work on the machine moves these figures)")


if __name__ == "__main__":
    main()

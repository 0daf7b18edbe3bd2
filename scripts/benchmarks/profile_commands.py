"""Profile LOCK + REDEEM through the services in-process: statements and CPU per command.

Rerun (PostgreSQL; under a minute):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        nice .venv/bin/python scripts/benchmarks/profile_commands.py --commands 500

Each command runs as api.commands.run_command runs it, minus HTTP: run_once with a fresh
Idempotency-Key, one transaction. After --warmup commands (pooled connection, prepared
statements), --commands commands run plainly, for the statements each command sent (BEGIN and
COMMIT aside) and the process CPU time per command, then as many again under cProfile, for the
functions with the most cumulative time. Like bench_commands.py it works in a database of its
own (--db-name), made and dropped by the run.
"""

import argparse
import cProfile
import io
import pstats
import sys
import time
import uuid
from decimal import Decimal

from bench_setup import throwaway_database

sys.setrecursionlimit(10_000)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=500, help="profiled (LOCK + REDEEM)")
    parser.add_argument("--warmup", type=int, default=40)
    parser.add_argument("--top", type=int, default=25, help="functions shown")
    parser.add_argument("--db-name", default="coupon_profile_commands")
    return parser.parse_args()


def cycles(template_id: int, count: int):
    """LOCK + REDEEM pairs, `count` commands in all, each on a fresh coupon."""
    from coupons.services import (
        CommandContext,
        LeaseProof,
        coupon_issue,
        coupon_lock,
        coupon_redeem,
    )
    from coupons.write.idempotency import run_once

    def keyed(run):
        """The command's result; its payload is the stored answer, as over the API."""
        key, made = uuid.uuid4().hex, []
        run_once(scope="profile", key=key, request_hash=key, actor="profile",
                 command=lambda ctx: made.append(run(ctx)) or made[-1].payload())
        return made[-1]

    coupons = [coupon_issue(template_id=template_id, user_id="profile",
                            ctx=CommandContext(actor="profile")).coupon.pk
               for _ in range(count // 2)]

    def run():
        for coupon_id in coupons:
            locked = keyed(lambda ctx, cid=coupon_id: coupon_lock(
                coupon_id=cid, order_id=f"o-{cid}", user_id="profile",
                order_amount=Decimal("300.00"), ctx=ctx))
            lease = LeaseProof.from_token(order_id=f"o-{coupon_id}",
                                          lock_token=locked.lock_token,
                                          expected_version=locked.state_version)
            keyed(lambda ctx, cid=coupon_id, lease=lease: coupon_redeem(
                coupon_id=cid, lease=lease, payment_id=f"p-{cid}", ctx=ctx))

    return run


def profile(args) -> None:
    from django.db import connection

    from coupons.services import template_create

    template = template_create(
        code="profile", name="profile 30 off", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
        min_order_amount=Decimal("0.00"), valid_days=3650,
    )
    cycles(template.pk, args.warmup)()
    commands = args.commands // 2 * 2
    sent = []

    def count(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    run = cycles(template.pk, commands)
    with connection.execute_wrapper(count):
        cpu, wall = time.process_time(), time.monotonic()
        run()
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    profiler = cProfile.Profile()
    profiler.runcall(cycles(template.pk, commands))
    prepared = connection.settings_dict["OPTIONS"].get("server_side_binding")
    # BEGIN and COMMIT are the driver's own calls, not a cursor's: not in `sent`.
    print(f"{commands} commands (LOCK + REDEEM) through run_once on {connection.vendor}, "
          f"prepared statements {'on' if prepared else 'off'}")
    print(f"statements per command (BEGIN and COMMIT aside): {len(sent) / commands:.2f}")
    print(f"CPU per command: {cpu / commands * 1000:.2f} ms; wall {wall / commands * 1000:.2f} "
          f"ms (the profiled run below is a second batch, slower under cProfile)")
    shown = io.StringIO()
    pstats.Stats(profiler, stream=shown).sort_stats("cumulative").print_stats(args.top)
    print(shown.getvalue())


def main() -> None:
    args = parse_args()
    with throwaway_database(args.db_name):
        profile(args)


if __name__ == "__main__":
    main()

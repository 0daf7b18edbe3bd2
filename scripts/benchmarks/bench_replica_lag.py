"""How far a streaming replica falls behind under the command load.

Rerun (as root or postgres; about a minute at the defaults on a 2-core machine):

    nice .venv/bin/python scripts/benchmarks/bench_replica_lag.py --seconds 10

`bin/replica-cluster up` makes a primary and its `pg_basebackup -R` replica on --ports (fsync
on), the app is migrated on the primary, and the LOCK + REDEEM cycle runs through
coupons.services (scripts/benchmarks/bench_commands.py's "services" way: claim, command, answer, one
transaction each) at 1, 4 and 16 clients for --seconds each. Meanwhile the primary's
pg_stat_replication is sampled every 50 ms: replay_lag (the time from a commit's flush on the
primary to its replay on the replica, as PostgreSQL measures it) and the WAL bytes the replica
has not replayed yet. The baseline is the same samples with no load, in the same run; the
ratio is the p99 under load over it. Both clusters are removed at the end.
"""

import argparse
import os
import subprocess
import tempfile
import threading
import time
from decimal import Decimal

from bench_commands import bulk_coupons, run_clients
from bench_setup import ROOT, load_average, setup_django

CLIENT_COUNTS = (1, 4, 16)
SAMPLE_SECONDS = 0.05
LAG_SQL = """SELECT COALESCE(EXTRACT(EPOCH FROM replay_lag) * 1000, 0),
                    pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)
             FROM pg_stat_replication"""


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per client count")
    parser.add_argument("--pool", type=int, default=3000, help="coupons ready per client")
    parser.add_argument("--ports", default="5452,5453", help="primary,replica")
    return parser.parse_args()


class LagSampler(threading.Thread):
    """Samples (replay lag ms, bytes behind) from the primary until stopped."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.port, self.samples, self.stopping = port, [], threading.Event()

    def run(self):
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user="postgres",
                             dbname="postgres", autocommit=True) as conn:
            while not self.stopping.is_set():
                row = conn.execute(LAG_SQL).fetchone()
                if row is not None:
                    self.samples.append((float(row[0]), int(row[1])))
                time.sleep(SAMPLE_SECONDS)

    def stop(self) -> list[tuple[float, int]]:
        self.stopping.set()
        self.join()
        return self.samples


def sampled(port: int, work) -> tuple[list, object]:
    sampler = LagSampler(port)
    sampler.start()
    try:
        result = work()
    finally:
        samples = sampler.stop()
    return samples, result


def percentile(sorted_values, p: float):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))]


def summary(samples) -> dict:
    lags = sorted(lag for lag, _ in samples)
    behind = sorted(size for _, size in samples)
    return {"lag_p50": percentile(lags, 50), "lag_p99": percentile(lags, 99),
            "lag_max": lags[-1], "bytes_p99": percentile(behind, 99),
            "bytes_max": behind[-1], "n": len(samples)}


def main() -> None:
    args = parse_args()
    primary, replica = (int(port) for port in args.ports.split(","))
    directory = tempfile.mkdtemp(prefix="replica-bench-")
    os.chmod(directory, 0o755)
    env = {**os.environ, "PRIMARY_PORT": str(primary), "REPLICA_PORT": str(replica),
           "FSYNC": "on"}
    script = [str(ROOT / "bin" / "replica-cluster")]
    subprocess.run([*script, "up", directory], env=env, check=True)
    try:
        subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(primary), "-U", "postgres", "-qc",
                        "CREATE DATABASE coupon_bench_replica"], check=True)
        setup_django(f"postgres://postgres@127.0.0.1:{primary}/coupon_bench_replica")
        from coupons.services import template_create

        template = template_create(code="lag", name="lag", kind="AMOUNT_OFF",
                                   face_value=Decimal("30.00"),
                                   min_order_amount=Decimal("200.00"), valid_days=30)
        idle = summary(sampled(primary, lambda: time.sleep(2))[0])
        rows = []
        for clients in CLIENT_COUNTS:
            coupons = bulk_coupons(template.pk, clients * args.pool, "'bench'")
            samples, run = sampled(primary, lambda c=clients, ids=coupons: run_clients(
                "services", c, ids, args.seconds, ()))
            rows.append((clients, run, summary(samples)))
    finally:
        from django.db import connections

        connections.close_all()
        subprocess.run([*script, "down", directory], env=env, check=False)
    print(f"\nReplica lag under LOCK + REDEEM through coupons.services, {args.seconds:g} s per "
          f"row; sampled every {SAMPLE_SECONDS * 1000:.0f} ms from pg_stat_replication")
    print(f"baseline, no load: replay lag p99 {idle['lag_p99']:.1f} ms, "
          f"max {idle['lag_max']:.1f} ms ({idle['n']} samples)")
    print(f"(load average {load_average()})")
    print("| clients | commands/s | replay lag p50 / p99 / max ms | p99 / baseline p99 "
          "| WAL not replayed p99 / max |")
    print("|---|---|---|---|---|")
    base = max(idle["lag_p99"], 0.001)
    for clients, run, lag in rows:
        print(f"| {clients} | {run['rate']:,.0f} | {lag['lag_p50']:.1f} / {lag['lag_p99']:.1f}"
              f" / {lag['lag_max']:.1f} | {lag['lag_p99'] / base:.1f}x | "
              f"{lag['bytes_p99'] / 1024:,.0f} KiB / {lag['bytes_max'] / 1024:,.0f} KiB |")


if __name__ == "__main__":
    main()

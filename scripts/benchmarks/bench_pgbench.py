"""PostgreSQL's own pgbench beside scripts/benchmarks/bench_commands.py's ways: the database's
floor.

`pgbench -b simple-update` (BEGIN, UPDATE one account, SELECT it, INSERT a history row, END)
against a throwaway database of its own, initialised here and dropped after: the cost of a
small write transaction with no application at all, on the same server, in the same rounds.
Prepared statements (`-M prepared`), as psycopg prepares the application's.
"""

import glob
import os
import re
import subprocess
import tempfile
from contextlib import contextmanager

from bench_setup import create_postgres_database, drop_postgres_database

# Debian's PostgreSQL server package has it (the newest installed major version), not on PATH.
PGBENCH = os.environ.get("PGBENCH") or max(
    glob.glob("/usr/lib/postgresql/*/bin/pgbench"), default="pgbench",
    key=lambda path: int(path.split("/")[4]))


@contextmanager
def pgbench_database(url: str, name: str, scale: int):
    """Database `name` on `url`'s server, initialised by `pgbench -i -s scale`; yields its URL."""
    bench_url = create_postgres_database(url, name)
    try:
        subprocess.run([PGBENCH, "-i", "-q", "-s", str(scale), bench_url], check=True,
                       capture_output=True)
        yield bench_url
    finally:
        drop_postgres_database(url, name)


def statements() -> int:
    """The statements of one simple-update transaction, BEGIN and END included."""
    script = subprocess.run([PGBENCH, "--show-script=simple-update"], check=True,
                            capture_output=True, text=True).stderr
    return sum(1 for line in script.splitlines()
               if line.strip() and not line.startswith(("\\", "--")))


def run(url: str, clients: int, seconds: float) -> dict:
    """One cell: `clients` connections for `seconds` (pgbench counts whole seconds, at least
    one). Answers the transactions, the wall time they took (pgbench's, without connecting),
    every latency from its per-transaction log and pgbench's own CPU seconds."""
    with tempfile.TemporaryDirectory(prefix="pgbench-") as logs:
        command = [PGBENCH, "-b", "simple-update", "-M", "prepared", "-n", "-l",
                   "-c", str(clients), "-j", str(min(clients, os.cpu_count() or 1)),
                   "-T", str(max(1, round(seconds))), url]
        with open(os.path.join(logs, "out"), "w+") as out:
            process = subprocess.Popen(command, cwd=logs, stdout=out, stderr=subprocess.STDOUT)
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            output = out.read()
        if process.returncode != 0:
            raise RuntimeError(f"pgbench failed:\n{output}")
        done = int(re.search(r"actually processed: (\d+)", output)[1])
        tps = float(re.search(r"tps = ([\d.]+) \(without initial connection", output)[1])
        latencies = []
        for log in os.listdir(logs):
            if log.startswith("pgbench_log."):
                with open(os.path.join(logs, log)) as lines:
                    latencies += [int(line.split()[2]) / 1e6 for line in lines]
    return {"commands": done, "wall": done / tps if tps else 0.0, "latencies": latencies,
            "cpu": usage.ru_utime + usage.ru_stime}


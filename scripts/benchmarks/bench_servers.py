"""The HTTP servers scripts/benchmarks/bench_commands.py measures the API through, one at a time.

A spec names one (`--servers`, comma-separated):

  bin/serve   the server as deployed, with the benchmark's --workers and --threads
  NAME:WxT    server NAME run directly with the environment bin/serve gives it (production
              settings, DEBUG off, a connection pool of T per process, a metrics directory of
              its own), W processes of T threads each:
                gunicorn  gunicorn's sync worker when T is 1 (it closes the connection after
                          each answer), its threaded worker (gthread) otherwise; keep-alive 75 s
                gthread   gunicorn's threaded worker even with one thread (keeps connections)
                granian   Granian's WSGI interface, T blocking threads per worker process
                          (not a dependency of the project: `pip install granian` first)
"""

import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager

from bench_setup import ROOT, wait_ready

NAMES = ("gunicorn", "gthread", "granian")


def parse(spec: str) -> tuple[str, int, int]:
    """(name, workers, threads) of NAME:WxT; bin/serve's are filled in by the caller."""
    if spec == "bin/serve":
        return spec, 0, 0
    name, _, size = spec.partition(":")
    workers, _, threads = size.partition("x")
    if name not in NAMES or not workers.isdigit() or not threads.isdigit():
        raise ValueError(f"{spec!r}: expected bin/serve or NAME:WxT with NAME one of {NAMES}")
    return name, int(workers), int(threads)


def command(name: str, port: int, workers: int, threads: int, run_dir: str) -> list[str]:
    py = sys.executable
    if name == "granian":
        return [py, "-m", "granian", "--interface", "wsgi", "--http", "1", "--no-ws",
                "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
                "--blocking-threads", str(threads), "--log-level", "warning",
                "config.wsgi:application"]
    worker_class = ["--worker-class", "gthread"] if name == "gthread" else []
    return [py, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
            "--workers", str(workers), "--threads", str(threads), *worker_class,
            "--keep-alive", "75", "--timeout", "30", "--error-logfile", "-",
            # Not gunicorn's default, which every instance of this user would share.
            "--control-socket", f"{run_dir}/gunicorn.ctl"]


@contextmanager
def serving(spec: str, env: dict, port: int, workers: int, threads: int):
    """The server of `spec` on 127.0.0.1:`port`, ready (/readyz answers 200); yields its
    process, whose children are its workers. bin/serve takes `workers` x `threads`."""
    name, spec_workers, spec_threads = parse(spec)
    run_dir = tempfile.mkdtemp(prefix="bench-serve-", dir="/tmp")
    env = {**env, "SERVE_RUN_DIR": run_dir}
    if name == "bin/serve":
        args = [str(ROOT / "bin" / "serve")]
        env.update(GUNICORN_BIND=f"127.0.0.1:{port}", GUNICORN_WORKERS=str(workers),
                   GUNICORN_THREADS=str(threads), DB_POOL_MAX_SIZE=str(threads))
    else:
        args = command(name, port, spec_workers, spec_threads, run_dir)
        os.makedirs(f"{run_dir}/metrics")
        env.update(DJANGO_SETTINGS_MODULE="config.settings", DJANGO_DEBUG="0",
                   DB_POOL_MAX_SIZE=str(spec_threads),
                   PROMETHEUS_MULTIPROC_DIR=f"{run_dir}/metrics")
    with open(f"{run_dir}/log", "w+") as log:
        server = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_ready(server, port, log=log)
            yield server
        finally:
            server.terminate()
            server.wait(timeout=60)
            shutil.rmtree(run_dir, ignore_errors=True)


def worker_cpu_seconds(server_pid: int) -> float:
    """CPU seconds the server's worker processes (its children) have used, from Linux /proc:
    what the project's code costs over HTTP, without the load generator's own HTTP work."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # a process that just ended
        if int(fields[1]) == server_pid:
            total += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return total

"""The one loop every long-running process runs (scanners with --loop, the relay, the fact
consumer): one step after another until SIGTERM. A step that lost its database, LISTEN or
broker connection raises `Lost`: the loss is reported and counted, and the next step follows a
capped back-off (doubling) instead; the process never exits on it.
"""

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from prometheus_client import Counter

# What a lost or refused database connection raises through Django.
DATABASE_ERRORS = (OperationalError, InterfaceError)
# Counted at once, not on commit: the loss happened whatever the transaction does.
CONNECTION_LOSSES = Counter(
    "coupons_worker_connection_losses",
    "Database, LISTEN or broker connections a long-running process lost; it reconnects.",
    ["process", "connection"])


def retry_delay(failures: int) -> float:
    """Seconds to wait after the `failures`-th failure in a row: doubling, capped."""
    return min(settings.WORKER_RETRY_MIN_SECONDS * 2 ** (failures - 1),
               settings.WORKER_RETRY_MAX_SECONDS)


class Backoff:
    """Failures in a row; `next()` answers the wait before the next attempt."""

    def __init__(self):
        self.failures = 0

    def next(self) -> float:
        self.failures += 1
        return retry_delay(self.failures)

    def reset(self) -> None:
        self.failures = 0


class Lost(Exception):
    """A step lost a connection (`kind`: database, listen, broker; None: it could not go on
    for another reason, backed off but not counted as a loss). `progressed`: it got
    somewhere first, so the failures before it no longer count. `describe(delay)` words the
    report line."""

    def __init__(self, kind: str | None, error, *, describe: Callable[[float], str],
                 progressed: bool = False):
        super().__init__(kind, error)
        self.kind, self.error, self.describe, self.progressed = kind, error, describe, progressed


def run_until_stopped(step: Callable[[], None], *, process: str, stop: threading.Event,
                      report: Callable[[str], object]) -> None:
    """Call `step()` until `stop` is set; each step waits (or not) as its process needs."""
    backoff = Backoff()
    while not stop.is_set():
        try:
            step()
        except Lost as lost:
            if lost.progressed:
                backoff.reset()
            if lost.kind is not None:
                CONNECTION_LOSSES.labels(process=process, connection=lost.kind).inc()
            delay = backoff.next()
            report(lost.describe(delay))
            stop.wait(delay)
            continue
        backoff.reset()


def session_options() -> dict:
    """libpq connection parameters for a long-running process's database sessions.

    A frozen process (SIGSTOP, a hung host) must not hold its transaction, and the row locks in
    it, for ever: the server ends a session idle in a transaction past
    WORKER_IDLE_IN_TRANSACTION_SECONDS, and TCP keepalives on both ends find a peer that is gone
    within about WORKER_TCP_KEEPALIVE_SECONDS instead of the kernel's two hours. Requests get
    none of it (a console request never idles in a transaction).
    """
    keepalive = settings.WORKER_TCP_KEEPALIVE_SECONDS
    probes, interval = 3, max(1, keepalive // 3)
    server = {"tcp_keepalives_idle": keepalive, "tcp_keepalives_interval": interval,
              "tcp_keepalives_count": probes,
              "idle_in_transaction_session_timeout": settings.WORKER_IDLE_IN_TRANSACTION_SECONDS
              * 1000}
    return {"keepalives": 1, "keepalives_idle": keepalive, "keepalives_interval": interval,
            "keepalives_count": probes,
            "options": " ".join(f"-c {name}={value}" for name, value in server.items())}


def use_worker_sessions() -> None:
    """From now on this process's database connections carry `session_options()`, and are not
    pooled: one thread needs one connection, which Django reopens when it was lost. A pool made
    for a server's threads grew to 10 connections after a few terminations and kept them."""
    connection = connections["default"]
    options = connection.settings_dict.setdefault("OPTIONS", {})
    options.pop("pool", None)
    added = session_options()
    # Startup options the database URL already carries are kept, ours after them.
    added["options"] = " ".join(filter(None, [options.get("options"), added["options"]]))
    options.update(added)
    # Connections opened before (and the pool made with the old options) are not reused.
    connection.close()
    connection.close_pool()


@contextlib.contextmanager
def until_sigterm() -> Iterator[threading.Event]:
    """The stop event of a management command's loop: set by SIGTERM or Ctrl-C. The loop's
    database sessions are a worker's (`use_worker_sessions`)."""
    use_worker_sessions()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        yield stop
    except KeyboardInterrupt:
        stop.set()

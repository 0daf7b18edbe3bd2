"""PostgreSQL with a pool that survives a database blip, on the embedded cluster by default.

Django's own pool check (CONN_HEALTH_CHECKS) hands the pool `check_connection`, and psycopg_pool
sleeps 1, 2, 4, 8 s between two failed checks of one request, so after every backend was
terminated (a failover, a restart, an administrator's terminate round) the requests that met the
dead idle connections waited or answered 503 with the database healthy. Here the borrowed
connection is checked, and the first dead one drains every idle connection at once: they were
all dropped together, so the next ones are new. A database that is really down still fails the
new connection, and the API answers 503 at once: a request with no idle connection waits for
the pool's next one only while the pool's attempts to connect are not failing
(`_wait_unless_refused`), so a database that refuses costs a request a quarter of a second, not
the pool's timeout.

The check costs no round trip while the server has said nothing: an idle connection hears
nothing, and a backend that is terminated (pg_terminate_backend, a restart, a failover's
shutdown, a pooler closing it) sends its FATAL message or closes the socket, which makes the
socket readable. Only a connection the server spoke to gets the empty query that says whether
it still works (it was one round trip on every request, a visible share of a command's time).

`numbered_cursor` is for the commands' long statements (coupons/sql/transitions.py).
"""

import logging
import re
import select
import shutil
import subprocess
import time
from functools import lru_cache

import psycopg
from django.db.backends.postgresql import base
from django.db.backends.postgresql.psycopg_any import register_tzloader
from psycopg.pq import Format
from psycopg_pool import PoolTimeout

from common import embedded_postgres
from common.unavailable import unavailable_reason

logger = logging.getLogger(__name__)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        """Without DATABASE_URL: the checkout's embedded cluster, started or found running
        first (settings name it in EMBEDDED_CLUSTER), at the socket it listens on."""
        params = super().get_connection_params()
        if name := self.settings_dict.get("EMBEDDED_CLUSTER"):
            cluster = _started(name)
            params.update(host=str(cluster.socket_dir), port=cluster.port)
        return params

    def get_new_connection(self, conn_params):
        pool = self.pool
        if pool is None:
            return super().get_new_connection(conn_params)
        _wait_unless_refused(pool)
        connection = super().get_new_connection(conn_params)
        if _heard_from_server(connection):
            try:
                pool.check_connection(connection)
            except psycopg.Error:
                logger.warning("database: a pooled connection was dropped by the server; "
                               "draining the idle ones")
                pool.putconn(connection)  # broken: the pool closes it and opens another
                pool.check()  # every idle one: dropped ones are closed and replaced
                _wait_unless_refused(pool)
                connection = super().get_new_connection(conn_params)
        _connected[pool.name] = _connect_errors(pool)
        return connection

    def numbered_cursor(self):
        """A cursor like `cursor()` for statements the caller builds once and runs many times.

        psycopg parses a statement's %s placeholders into PostgreSQL's $1, $2, ... at every
        execute, keeping the result only for statements under 4096 characters and 50
        parameters; a command's one write is longer and has more. This cursor takes the same
        %s text (so Django's wrappers count and log it as any other) and sends it numbered,
        the numbering done once per text (`numbered`).
        """
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            cursor = NumberedCursor(self.connection)
            # As Django's create_cursor: its own time zone only if the connection's differs.
            tzloader = self.connection.adapters.get_loader(base.TIMESTAMPTZ_OID, Format.TEXT)
            if self.timezone != tzloader.timezone:
                register_tzloader(self.timezone, cursor)
            return self._prepare_cursor(cursor)


def _started(name: str):
    """The embedded cluster, started: one that cannot start is a database out of reach (a 503,
    common/unavailable.py), and a disk that is full says so (PostgreSQL's disk_full)."""
    try:
        return embedded_postgres.start(name)
    except (OSError, subprocess.SubprocessError) as error:
        folder = embedded_postgres.data_dir(name)
        if unavailable_reason(error) == "disk_full" or _nearly_full(folder):
            raise psycopg.errors.DiskFull(
                f"the embedded cluster {name} cannot start: no space left on the disk of "
                f"{folder}") from error
        raise psycopg.OperationalError(f"the embedded cluster {name} cannot start: {error}") \
            from error


# Less free space than this where the embedded cluster keeps its files: a start that failed
# there failed for want of it (pg_ctl says so only in the server's log).
NEARLY_FULL_BYTES = 64 * 1024 * 1024


def _nearly_full(folder) -> bool:
    try:
        return shutil.disk_usage(folder if folder.exists() else folder.parent).free \
            < NEARLY_FULL_BYTES
    except OSError:
        return False


class NumberedCursor(psycopg.RawCursor):
    def execute(self, query, params=None, **kwargs):
        return super().execute(numbered(query), params, **kwargs)


PLACEHOLDER = re.compile(r"%[s%]")


@lru_cache(maxsize=256)
def numbered(query: str) -> str:
    """`query` with its %s placeholders numbered $1, $2, ... and each %% a %."""
    count = iter(range(1, query.count("%s") + 1))
    return PLACEHOLDER.sub(lambda found: "%" if found[0] == "%%" else f"${next(count)}", query)


# Per pool (by name): how many of its attempts to connect had failed when a request last got a
# connection from it.
_connected: dict[str, int] = {}
# A request with no idle connection waits for the pool's new one in slices this long; after
# each, while the pool's attempts are failing, it asks the database itself.
WAIT_SLICE_SECONDS = 0.25


def _connect_errors(pool) -> int:
    return pool.get_stats().get("connections_errors", 0)


def _refusing(pool) -> bool:
    """Whether the pool failed to connect since a request last got a connection from it."""
    return _connect_errors(pool) > _connected.get(pool.name, 0)


def _wait_unless_refused(pool) -> None:
    """With no idle connection, wait for the pool's next one (up to the pool's timeout), unless
    the database refuses connections: then fail (503) in a fraction of a second instead of
    holding the request's thread for the pool's timeout. A slow connect (a failover under way)
    and a database that accepts again are still waited for.

    The connection waited for goes back to the pool for Django's own getconn, which takes it.
    """
    if pool.get_stats().get("pool_available", 0):
        return
    pool.open()
    deadline = time.monotonic() + pool.timeout
    while True:
        wait = min(WAIT_SLICE_SECONDS, max(deadline - time.monotonic(), 0.01))
        try:
            pool.putconn(pool.getconn(timeout=wait))
            return
        except PoolTimeout:
            if time.monotonic() >= deadline:
                raise
            if _refusing(pool):
                _connect_once(pool)


def _connect_once(pool) -> None:
    """One connection of our own, closed at once: raises (OperationalError) if the database
    refuses it. The pool's own attempts back off, so they cannot say how it is now."""
    psycopg.connect(pool.conninfo, **pool.kwargs).close()


def _heard_from_server(connection) -> bool:
    """Whether the server sent anything (or hung up) since the connection went idle in the pool."""
    if connection.closed:
        return True
    poller = select.poll()
    poller.register(connection.fileno(), select.POLLIN)
    return bool(poller.poll(0))

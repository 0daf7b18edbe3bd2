"""PostgreSQL with a pool that survives a database blip, on the embedded cluster by default.

Django's own pool check (CONN_HEALTH_CHECKS) hands the pool `check_connection`, and psycopg_pool
sleeps 1, 2, 4, 8 s between two failed checks of one request, so after every backend was
terminated (a failover, a restart, an administrator's terminate round) the requests that met the
dead idle connections waited or answered 503 with the database healthy. Here the borrowed
connection is checked, and the first dead one drains every idle connection at once: they were
all dropped together, so the next ones are new. A database that is really down still fails the
new connection, and the API answers 503 as before.

The check costs no round trip while the server has said nothing: an idle connection hears
nothing, and a backend that is terminated (pg_terminate_backend, a restart, a failover's
shutdown, a pooler closing it) sends its FATAL message or closes the socket, which makes the
socket readable. Only a connection the server spoke to gets the empty query that says whether
it still works (it was one round trip on every request, a visible share of a command's time).

`numbered_cursor` is for the commands' long statements (coupons.write.one_statement).
"""

import logging
import re
import select
from functools import lru_cache

import psycopg
from django.db.backends.postgresql import base
from django.db.backends.postgresql.psycopg_any import register_tzloader
from psycopg.pq import Format

from common import embedded_postgres

logger = logging.getLogger(__name__)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        """Without DATABASE_URL: the checkout's embedded cluster, started or found running
        first (settings name it in EMBEDDED_CLUSTER), at the socket it listens on."""
        params = super().get_connection_params()
        if name := self.settings_dict.get("EMBEDDED_CLUSTER"):
            cluster = embedded_postgres.start(name)
            params.update(host=str(cluster.socket_dir), port=cluster.port)
        return params

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        pool = self.pool
        if pool is None or not _heard_from_server(connection):
            return connection
        try:
            pool.check_connection(connection)
        except psycopg.Error:
            logger.warning("database: a pooled connection was dropped by the server; "
                           "draining the idle ones")
            pool.putconn(connection)  # broken: the pool closes it and opens another
            pool.check()  # every idle one: dropped ones are closed and replaced
            connection = super().get_new_connection(conn_params)
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


class NumberedCursor(psycopg.RawCursor):
    def execute(self, query, params=None, **kwargs):
        return super().execute(numbered(query), params, **kwargs)


PLACEHOLDER = re.compile(r"%[s%]")


@lru_cache(maxsize=256)
def numbered(query: str) -> str:
    """`query` with its %s placeholders numbered $1, $2, ... and each %% a %."""
    count = iter(range(1, query.count("%s") + 1))
    return PLACEHOLDER.sub(lambda found: "%" if found[0] == "%%" else f"${next(count)}", query)


def _heard_from_server(connection) -> bool:
    """Whether the server sent anything (or hung up) since the connection went idle in the pool."""
    if connection.closed:
        return True
    poller = select.poll()
    poller.register(connection.fileno(), select.POLLIN)
    return bool(poller.poll(0))

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
"""

import logging
import select

import psycopg
from django.db.backends.postgresql import base

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


def _heard_from_server(connection) -> bool:
    """Whether the server sent anything (or hung up) since the connection went idle in the pool."""
    if connection.closed:
        return True
    poller = select.poll()
    poller.register(connection.fileno(), select.POLLIN)
    return bool(poller.poll(0))

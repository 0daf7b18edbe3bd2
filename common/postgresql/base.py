"""PostgreSQL with a pool that survives a database blip, on the embedded cluster by default.

Django's own pool check (CONN_HEALTH_CHECKS) hands the pool `check_connection`, and psycopg_pool
sleeps 1, 2, 4, 8 s between two failed checks of one request, so after every backend was
terminated (a failover, a restart, an administrator's terminate round) the requests that met the
dead idle connections waited or answered 503 with the database healthy. Here the borrowed
connection is checked (one empty query), and the first dead one drains every idle connection at
once: they were all dropped together, so the next ones are new. A database that is really down
still fails the new connection, and the API answers 503 as before.
"""

import logging

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
        if pool is None:
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

"""The database metrics, counted once per request instead of around every statement.

django-prometheus's database backends wrapped each execute in two label lookups, a histogram
timer and an exception counter, which in multiprocess mode (bin/serve) write to shared memory:
a cost on every statement of every command. Here a request tallies its statements in plain
integers and adds them to the same counters once at its end, so `django_db_execute_total`,
`django_db_errors_total{type}` and `django_db_new_connections_total` (docs/operating.md)
keep their names and meaning. The per-statement duration histogram is gone: a slow request
shows in `django_http_requests_latency_seconds_by_view_method`, a slow statement in
PostgreSQL's own statistics.
"""

from collections import Counter
from contextlib import ExitStack

from django.db import connections
from django.db.backends.signals import connection_created
from django.dispatch import receiver
from django_prometheus.db import connections_total, errors_total, execute_total

# django-prometheus's `vendor` label: every database here is PostgreSQL.
VENDOR = "postgresql"


class StatementTally:
    """An execute wrapper (Django's `connection.execute_wrapper`) that only counts."""

    def __init__(self):
        self.statements = 0
        self.errors = Counter()

    def __call__(self, execute, sql, params, many, context):
        self.statements += 1
        try:
            return execute(sql, params, many, context)
        except Exception as error:
            self.errors[type(error).__name__] += 1
            raise


class DatabaseMetricsMiddleware:
    """Counts the statements and failed statements of each request, per database."""

    def __init__(self, get_response):
        self.get_response = get_response
        for alias in connections:
            # Exported from the start, at 0: a rate over a series that appears later is lost.
            execute_total.labels(alias, VENDOR)
            connections_total.labels(alias, VENDOR)

    def __call__(self, request):
        tallies = {}
        with ExitStack() as stack:
            for alias in connections:
                tallies[alias] = tally = StatementTally()
                stack.enter_context(connections[alias].execute_wrapper(tally))
            response = self.get_response(request)
        for alias, tally in tallies.items():
            record(connections[alias], tally)
        return response


def record(connection, tally: StatementTally) -> None:
    if tally.statements:
        execute_total.labels(connection.alias, VENDOR).inc(tally.statements)
    for kind, count in tally.errors.items():
        errors_total.labels(connection.alias, VENDOR, kind).inc(count)


@receiver(connection_created, dispatch_uid="common.db_metrics.count_connection")
def count_connection(sender, connection, **kwargs):
    """A connection opened (or, with the pool, borrowed) for a request or a command."""
    connections_total.labels(connection.alias, VENDOR).inc()

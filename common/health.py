"""Load-balancer probes: /healthz (the process answers) and /readyz (it can serve, and what
it serves without: `{"status": "degraded", "degraded": ["cache"]}` while Redis is away).

A middleware, first in MIDDLEWARE, answers them before anything else runs: no host check (a
balancer probes by address, not by ALLOWED_HOSTS name), no HTTPS redirect (it probes over plain
HTTP inside the network), no session, no authentication. The bodies say nothing an outsider
could use: no versions, host names, database names or exception text; the reason a probe
failed goes to the log.
"""

import logging

from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse

from common.errors import error_body

logger = logging.getLogger(__name__)

HEALTHZ = "/healthz"
READYZ = "/readyz"
# A balancer that sees 503 retries the instance after this many seconds.
RETRY_AFTER_SECONDS = 5


def unapplied_migrations() -> int:
    """How many migrations on disk the database has not applied (one query on the table)."""
    connection = connections[DEFAULT_DB_ALIAS]
    executor = MigrationExecutor(connection)
    return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def readiness_problem() -> str | None:
    """Why this process cannot serve yet, for the log; None when it can."""
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT 1")
        pending = unapplied_migrations()
    except Exception:  # any failure to reach the database means "not ready", never a 500
        logger.exception("readyz: the database cannot be reached")
        return "database unreachable"
    if pending:
        logger.warning("readyz: %d migration(s) not applied", pending)
        return "migrations not applied"
    return None


def degraded_dependencies() -> list[str]:
    """What the process serves without, for the body of a 200: Redis unreachable is "cache"
    (common/resilient_cache.py answers from memory). Not a reason to take the instance out."""
    probe = getattr(caches["default"], "probe", None)
    return ["cache"] if probe is not None and not probe() else []


def ready() -> JsonResponse:
    degraded = degraded_dependencies()
    if degraded:
        return JsonResponse({"status": "degraded", "degraded": degraded})
    return JsonResponse({"status": "ok"})


def not_ready() -> JsonResponse:
    body = error_body("SERVICE_UNAVAILABLE", "Not ready to serve requests.",
                      {"retry_after": RETRY_AFTER_SECONDS})
    response = JsonResponse(body, status=503)
    response["Retry-After"] = RETRY_AFTER_SECONDS
    return response


class HealthCheckMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path == HEALTHZ:
            return no_store(JsonResponse({"status": "ok"}))
        if request.path == READYZ:
            return no_store(not_ready() if readiness_problem() else ready())
        return self.get_response(request)


def no_store(response: JsonResponse) -> JsonResponse:
    # A cache between the balancer and the app must not answer for a later probe.
    response["Cache-Control"] = "no-store"
    return response

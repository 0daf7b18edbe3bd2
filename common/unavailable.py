"""What the database's being out of reach looks like from here, and how it is worded: a
connection refused or lost, or a disk full (PostgreSQL's disk_full, or ENOSPC where the
embedded cluster's files are written). Each is a 503 with Retry-After, never a 500: nothing was
changed, and the same request succeeds once the database can serve (api/exceptions.py for the
API, timeline/errors.py for the pages)."""

import errno
import sys

import psycopg
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.translation import gettext_lazy as _
from django.views import defaults

from common.errors import error_body

# PostgreSQL's disk_full: a table or its WAL could not grow.
DISK_FULL = "53100"
# A database restart or failover takes seconds; callers retry with the same Idempotency-Key.
RETRY_AFTER_SECONDS = 5
MESSAGES = {
    "disk_full": _("The database's disk is full; nothing was changed. Retry once space has "
                   "been freed."),
    "unreachable": _("The database is not reachable right now; retry later."),
}


def _chain(error: BaseException):
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def unavailable_reason(error: BaseException | None) -> str | None:
    """"disk_full", "unreachable", or None when `error` is not the database being out of reach."""
    if error is None:
        return None
    for link in _chain(error):
        if getattr(link, "sqlstate", None) == DISK_FULL or (
                isinstance(link, OSError) and link.errno == errno.ENOSPC):
            return "disk_full"
    if isinstance(error, OperationalError | InterfaceError | psycopg.OperationalError):
        return "unreachable"
    return None


def server_error(request):
    """Django's handler500: a 503 with Retry-After when what went wrong is the database out of
    reach (a console page, or under /api/ an error outside the API's views, such as a session
    read), else Django's own 500.

    The page is rendered without the request's context processors: they read the database.
    """
    reason = unavailable_reason(sys.exc_info()[1])
    if reason is None:
        return defaults.server_error(request)
    if request.path.startswith("/api/"):
        response = JsonResponse(error_body("SERVICE_UNAVAILABLE", MESSAGES[reason],
                                           {"retry_after": RETRY_AFTER_SECONDS,
                                            "reason": reason}), status=503)
    else:
        response = HttpResponse(render_to_string("503.html", {"message": MESSAGES[reason]}),
                                status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response

"""The error reference each problem details' `type` points at (docs/api.md, "Problem details"):
public like the schema, one entry per code with the anchor `#<code in lower case>`, so the URI
an answer names resolves on the instance that sent it."""

from django.shortcuts import render
from django.views.decorators.http import require_GET
from rest_framework import status

from api.error_serializers import ERROR_CODES, domain_errors
from api.exceptions import DRF_CODES, RequestTooLarge
from api.pagination import InvalidCursor
from api.problems import TITLES

# The statuses of the codes no domain error class carries.
FRAMEWORK_STATUSES = {
    **{code: error.status_code for error, code in DRF_CODES.items()},
    "NOT_AUTHENTICATED": status.HTTP_401_UNAUTHORIZED,
    "INTERNAL_ERROR": status.HTTP_500_INTERNAL_SERVER_ERROR,
    "SERVICE_UNAVAILABLE": status.HTTP_503_SERVICE_UNAVAILABLE,
}


def code_statuses() -> dict[str, list[int]]:
    """Each code with the HTTP statuses it is answered with."""
    found: dict[str, set[int]] = {}
    for error in [*domain_errors(), InvalidCursor, RequestTooLarge]:
        if "code" in vars(error) and error.code in ERROR_CODES:
            found.setdefault(error.code, set()).add(error.http_status)
    for code, answered in FRAMEWORK_STATUSES.items():
        found.setdefault(code, set()).add(answered)
    return {code: sorted(found.get(code, ())) for code in ERROR_CODES}


@require_GET
def error_reference(request):
    entries = [{"code": code, "anchor": code.lower(), "title": TITLES.get(code, code),
                "statuses": statuses} for code, statuses in code_statuses().items()]
    return render(request, "api/errors.html", {"entries": entries})

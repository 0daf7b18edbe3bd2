"""Error answers as RFC 9457 problem details, for a client that asks for them (docs/api.md,
"Problem details").

A client that sends `Accept: application/problem+json` gets its error answers as
`application/problem+json`: `type` (the code's entry in docs/api.md), `title`, `status`,
`detail`, and beside them today's `code`, `details` and `error` envelope, so code written
against the envelope reads it unchanged. Without it the answer stays today's
`application/json` envelope. Every error answer carries `Vary: Accept`.
"""

import json

from django.conf import settings
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext_lazy as _
from rest_framework.negotiation import DefaultContentNegotiation

PROBLEM_JSON = "application/problem+json"

# One short title per code, the same for every occurrence (RFC 9457, 3.1.3); `detail` says
# what went wrong this time. docs/api.md ("Error codes") says when each one happens.
TITLES = {
    "ALREADY_EXISTS": _("Already exists"),
    "COMPENSATION_PENDING": _("A compensation is pending"),
    "COUPON_BUSY": _("Coupon busy"),
    "COUPON_EXPIRED": _("Coupon expired"),
    "COUPON_NOT_YET_VALID": _("Coupon not yet valid"),
    "EVIDENCE_CHANGED": _("Record changed since it was shown"),
    "EVIDENCE_MISMATCH": _("Evidence does not match its journal"),
    "GOODWILL_ALREADY_GIVEN": _("Goodwill coupon already given"),
    "IDEMPOTENCY_KEY_MISSING": _("Idempotency-Key missing"),
    "IDEMPOTENCY_KEY_REUSED": _("Idempotency-Key reused with another body"),
    "IDEMPOTENCY_RECORD_INVALID": _("Idempotency-Key record cannot be verified"),
    "IDEMPOTENCY_REQUEST_IN_PROGRESS": _("Request with this Idempotency-Key in progress"),
    "INTERNAL_ERROR": _("Internal error"),
    "INVALID_CURSOR": _("Invalid cursor"),
    "INVALID_STATE": _("Invalid state"),
    "MESSAGE_ID_REUSED": _("Message id reused with another body"),
    "METHOD_NOT_ALLOWED": _("Method not allowed"),
    "NOT_ACCEPTABLE": _("Not acceptable"),
    "NOT_AUTHENTICATED": _("Not authenticated"),
    "NOT_COUPON_OWNER": _("Not the coupon's owner"),
    "NOT_FOUND": _("Not found"),
    "OPERATION_NOT_REVERSIBLE": _("Operation not reversible"),
    "ORDER_MISMATCH": _("Order mismatch"),
    "PERMISSION_DENIED": _("Permission denied"),
    "REFUND_ID_REUSED": _("Refund id reused"),
    "REPLAY_IN_PROGRESS": _("Replay in progress"),
    "REQUEST_TOO_LARGE": _("Request body too large"),
    "SAME_OPERATOR": _("Same operator"),
    "SERVICE_UNAVAILABLE": _("Service unavailable"),
    "TEMPLATE_INACTIVE": _("Template inactive"),
    "TERMS_CONFLICT": _("Terms conflict"),
    "THRESHOLD_NOT_MET": _("Threshold not met"),
    "THROTTLED": _("Too many requests"),
    "TOKEN_MISMATCH": _("Lease token mismatch"),
    "UNSUPPORTED_MEDIA_TYPE": _("Unsupported media type"),
    "VALIDATION_ERROR": _("Request not valid"),
    "VERSION_CONFLICT": _("Version conflict"),
}


def problem_type(code: str) -> str:
    """The code's entry in docs/api.md: the heading `CODE` there has the anchor `code`."""
    return f"{settings.API_ERROR_DOCS_URL}#{code.lower()}"


def quality(parameters: str) -> float:
    for parameter in parameters.replace(" ", "").lower().split(";"):
        if parameter.startswith("q="):
            try:
                return float(parameter[2:])
            except ValueError:
                return 0.0
    return 1.0


def wants_problem(accept: str) -> bool:
    """Named outright (not through */*) and not refused with q=0."""
    for entry in accept.split(","):
        media, _semicolon, parameters = entry.partition(";")
        if media.strip().lower() == PROBLEM_JSON and quality(parameters) > 0:
            return True
    return False


class ProblemAwareNegotiation(DefaultContentNegotiation):
    """A client that takes problem details for its errors takes JSON for its answers: its
    `Accept: application/problem+json` alone is no 406."""

    def get_accept_list(self, request):
        return ["application/json" if token.split(";")[0].strip().lower() == PROBLEM_JSON
                else token for token in super().get_accept_list(request)]


def problem_body(envelope: dict, status: int) -> dict:
    error = envelope["error"]
    return {
        "type": problem_type(error["code"]),
        "title": str(TITLES.get(error["code"], error["code"])),
        "status": status,
        "detail": error["message"],
        "code": error["code"],
        "details": error["details"],
        "error": error,
    }


def negotiate_error(request, response):
    """An error answer under /api/, as the request's Accept asks (see the module's text)."""
    if response.status_code < 400:
        return response
    patch_vary_headers(response, ["Accept"])
    if not wants_problem(request.headers.get("Accept", "")):
        return response
    if not response.get("Content-Type", "").startswith("application/json"):
        return response
    try:
        envelope = json.loads(response.content)
    except ValueError:
        return response
    if not (isinstance(envelope, dict) and isinstance(envelope.get("error"), dict)):
        return response
    # The language LocaleMiddleware chose for the answer, which it names.
    with translation.override(response.get("Content-Language") or translation.get_language()):
        body = problem_body(envelope, response.status_code)
    response.content = json.dumps(body, ensure_ascii=False).encode()
    response["Content-Type"] = PROBLEM_JSON
    if response.has_header("Content-Length"):
        response["Content-Length"] = str(len(response.content))
    return response

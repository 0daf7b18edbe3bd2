"""The one place where errors become HTTP answers (docs/api.md)."""

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.signals import got_request_exception
from django.http import Http404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from api.throttling import FailedAuthenticationThrottle
from common.errors import error_body
from common.unavailable import MESSAGES, RETRY_AFTER_SECONDS, unavailable_reason
from coupons.errors import CouponError

logger = logging.getLogger(__name__)

DRF_CODES = {
    exceptions.ValidationError: "VALIDATION_ERROR",
    exceptions.ParseError: "VALIDATION_ERROR",
    exceptions.NotAuthenticated: "NOT_AUTHENTICATED",
    exceptions.AuthenticationFailed: "NOT_AUTHENTICATED",
    exceptions.PermissionDenied: "PERMISSION_DENIED",
    exceptions.NotFound: "NOT_FOUND",
    exceptions.MethodNotAllowed: "METHOD_NOT_ALLOWED",
    exceptions.UnsupportedMediaType: "UNSUPPORTED_MEDIA_TYPE",
    exceptions.NotAcceptable: "NOT_ACCEPTABLE",
    exceptions.Throttled: "THROTTLED",
}
# The codes of answers no handler expected (unexpected_error_response).
UNEXPECTED_CODES = ("INTERNAL_ERROR", "SERVICE_UNAVAILABLE")


class RequestTooLarge(CouponError):
    """A body over DATA_UPLOAD_MAX_MEMORY_SIZE: what is wrong is its size, not its content."""

    code = "REQUEST_TOO_LARGE"
    http_status = 413
    message = gettext_lazy("The request body is too large.")


def api_exception_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):
        exc = RequestTooLarge(max_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    if isinstance(exc, CouponError):
        if exc.http_status >= 409:
            logger.info("refused %s: %s", exc.code, exc.details)
        wait = exc.details.get("retry_after")
        headers = {"Retry-After": str(wait)} if wait is not None else None
        return Response(exc.as_body(), status=exc.http_status, headers=headers)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RecursionError) and "JSON" in str(exc):
        # DRF's JSONParser only turns ValueError into ParseError; deeply nested JSON is bad
        # input too, not a 500.
        exc = exceptions.ParseError(_("JSON parse error - nested too deeply."))
    response = exception_handler(exc, context)
    if response is None:
        return unexpected_error_response(exc, context["request"])
    code = next((c for cls, c in DRF_CODES.items() if isinstance(exc, cls)), "INTERNAL_ERROR")
    if isinstance(exc, exceptions.ValidationError):
        details = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        message = _("The request is not valid.")
    elif isinstance(exc, exceptions.Throttled):
        # DRF sets Retry-After from the throttle's wait, which a throttle may not know (a rate
        # lowered below what the window already holds): then a second, never no header.
        wait = int(response.get("Retry-After") or 1)
        response["Retry-After"] = str(wait)
        details, message = {"retry_after": wait}, str(exc.detail)
    else:
        details, message = {}, str(exc.detail)
    if response.status_code == status.HTTP_401_UNAUTHORIZED:
        code = "NOT_AUTHENTICATED"
        # Every 401 counts against the client's address; past the rate it is refused (429)
        # before its next key is looked up.
        FailedAuthenticationThrottle().record_failure(context["request"])
    response.data = error_body(code, message, details)
    return response


def unavailable_response(reason: str) -> Response:
    """503 SERVICE_UNAVAILABLE for a database out of reach; `details.reason` says which way
    (`disk_full`, `unreachable`)."""
    body = error_body("SERVICE_UNAVAILABLE", MESSAGES[reason],
                      {"retry_after": RETRY_AFTER_SECONDS, "reason": reason})
    return Response(body, status=status.HTTP_503_SERVICE_UNAVAILABLE,
                    headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


def unexpected_error_response(exc, request) -> Response:
    """The error contract (docs/api.md) for what no handler expected: 503 when the database is out
    of reach (refused, lost, its disk full: common/unavailable.py), else 500.

    Answered here rather than by Django so that DEBUG never turns it into a technical page
    (settings, the request, its body with a lock_token). The traceback goes to the log, which
    common.log_redaction keeps free of keys and tokens, and the signal Django sends for an
    unhandled exception still goes out (error trackers and the test client listen to it).
    """
    set_rollback()
    got_request_exception.send(sender=None, request=request._request)
    reason = unavailable_reason(exc)
    if reason is not None:
        logger.error("database unavailable on %s %s (%s)", request.method, request.path, reason,
                     exc_info=exc)
        return unavailable_response(reason)
    logger.error("internal error on %s %s", request.method, request.path, exc_info=exc)
    body = error_body("INTERNAL_ERROR", _("Something went wrong on our side; it has been logged."))
    return Response(body, status=status.HTTP_500_INTERNAL_SERVER_ERROR)

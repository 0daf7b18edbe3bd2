"""The one place where errors become HTTP answers (SPEC §6)."""

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, JsonResponse
from django.views.defaults import page_not_found
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from coupons.errors import CouponError, error_body

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


def api_exception_handler(exc, context):
    if isinstance(exc, CouponError):
        if exc.http_status >= 409:
            logger.info("refused %s: %s", exc.code, exc.details)
        return Response(exc.as_body(), status=exc.http_status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        exc = exceptions.ParseError("The request body is too large.")
    elif isinstance(exc, RecursionError) and "JSON" in str(exc):
        # DRF's JSONParser only turns ValueError into ParseError; deeply nested JSON is bad
        # input too, not a 500.
        exc = exceptions.ParseError("JSON parse error - nested too deeply.")
    response = exception_handler(exc, context)
    if response is None:
        return None  # a bug: let Django log it and answer 500
    code = next((c for cls, c in DRF_CODES.items() if isinstance(exc, cls)), "ERROR")
    if isinstance(exc, exceptions.ValidationError):
        details = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        message = "The request is not valid."
    else:
        details, message = {}, str(exc.detail)
    if response.status_code == status.HTTP_401_UNAUTHORIZED:
        code = "NOT_AUTHENTICATED"
    response.data = error_body(code, message, details)
    return response


def not_found(request, exception=None):
    """handler404: API callers get SPEC §6 JSON for URLs no route matches, people get a page."""
    if request.path.startswith("/api/"):
        body = error_body("NOT_FOUND", "No such resource.", {"path": request.path})
        return JsonResponse(body, status=404)
    return page_not_found(request, exception)

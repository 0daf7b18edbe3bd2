"""What a log line says about the request (or message) it belongs to: its id, the client and
the coupon. common/log_json.py writes these fields on every line."""

import re
import uuid
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType

REQUEST_ID_HEADER = "X-Request-ID"
# A caller's id is kept only if it looks like one: it goes into every log line and a header.
VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")

# Read-only default: every change sets a new mapping, so no request shares another's.
log_context: ContextVar[Mapping] = ContextVar("log_context", default=MappingProxyType({}))


def bind(**fields) -> None:
    """Add fields to the current request's log context."""
    log_context.set({**log_context.get(), **fields})


@contextmanager
def bound(**fields):
    """Fields for the lines logged inside the block (a consumed message, say)."""
    token = log_context.set({**log_context.get(), **fields})
    try:
        yield
    finally:
        log_context.reset(token)


class RequestContextMiddleware:
    """Accepts the caller's X-Request-ID (or makes one), answers it, and binds the client and
    the coupon the URL names.

    The context is replaced at the start of each request and not reset at its end: Django
    logs a 4xx/5xx ("Bad Request: ...") after the middleware chain has returned, and that
    line must carry the request id too.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        given = request.headers.get(REQUEST_ID_HEADER, "")
        request.request_id = given if VALID_REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        log_context.set({"request_id": request.request_id})
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request.request_id
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        if "coupon_id" in view_kwargs:
            bind(coupon_id=view_kwargs["coupon_id"])
        # A signed-in person; a service client is bound by its token authentication, which
        # DRF runs inside the view.
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            bind(client=f"user:{user.get_username()}")

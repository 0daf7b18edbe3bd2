"""Middleware only people's browsers need, skipped for a service client's API request.

A request under /api/ whose `Authorization` scheme is `Token` is decided by
api.authentication.ServiceTokenAuthentication alone: DRF tries the session only when
that authenticator returns nothing, and for the `Token` scheme it never does (a good key is a
client, anything else a 401). So the session, its CSRF check, the signed-in user, messages,
the remembered language, htmx and the sign-in lockout have nothing to do for it: each of those
middlewares is subclassed here to pass such a request straight through, hooks included. Every
other request, the console's and a browser's session calls to the API alike, runs them all.

The headers these middlewares add stay on every answer: `Vary: Cookie` (the language cookie
still chooses the language of an API answer's messages) is added for a token request too.
"""

from axes.middleware import AxesMiddleware
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.middleware.csrf import CsrfViewMiddleware
from django.utils.cache import patch_vary_headers
from django_htmx.middleware import HtmxMiddleware

API_PREFIX = "/api/"


def is_token_request(request) -> bool:
    """DRF's own reading of the header (rest_framework.authentication.get_authorization_header):
    its first word, case-insensitively."""
    if not request.path.startswith(API_PREFIX):
        return False
    scheme = request.META.get("HTTP_AUTHORIZATION", "").split(None, 1)
    return bool(scheme) and scheme[0].lower() == "token"


class ConsoleOnly:
    """Mixed in before a middleware class: a token request goes straight to the next one.

    Subclasses, not wrappers, so the admin's system checks still find the middleware they
    need (admin.E408-E410)."""

    def __call__(self, request):
        if is_token_request(request):
            return self.get_response(request)
        return super().__call__(request)


class Sessions(SessionMiddleware):
    def __call__(self, request):
        if is_token_request(request):
            response = self.get_response(request)
            # As SessionMiddleware does once the user was looked up: the answer's language
            # may follow the language cookie.
            patch_vary_headers(response, ("Cookie",))
            return response
        return super().__call__(request)


class Csrf(ConsoleOnly, CsrfViewMiddleware):
    def process_view(self, request, *args):
        return None if is_token_request(request) else super().process_view(request, *args)


class Authentication(ConsoleOnly, AuthenticationMiddleware):
    pass


class Messages(ConsoleOnly, MessageMiddleware):
    pass


class Htmx(ConsoleOnly, HtmxMiddleware):
    pass


class Axes(ConsoleOnly, AxesMiddleware):
    pass

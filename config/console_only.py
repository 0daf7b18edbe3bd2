"""Middleware only people's browsers need, skipped for a service client's API request (issue 18).

A request under /api/ whose `Authorization` scheme is `Token` is decided by
coupons.api.authentication.ServiceTokenAuthentication alone: DRF tries the session only when
that authenticator returns nothing, and for the `Token` scheme it never does (a good key is a
client, anything else a 401). So the session, its CSRF check, the signed-in user, messages,
the remembered language, htmx and the sign-in lockout have nothing to do for it: each of those
middlewares is wrapped here and passes such a request straight through, hooks included. Every
other request, the console's and a browser's session calls to the API alike, runs them all.

The headers these middlewares add stay on every answer: `Vary: Cookie` (the language cookie
still chooses the language of an API answer's messages) is added for a token request too.
"""

from django.utils.cache import patch_vary_headers
from django.utils.module_loading import import_string

API_PREFIX = "/api/"
HOOKS = ("process_view", "process_exception", "process_template_response")


def is_token_request(request) -> bool:
    """DRF's own reading of the header (rest_framework.authentication.get_authorization_header):
    its first word, case-insensitively."""
    if not request.path.startswith(API_PREFIX):
        return False
    scheme = request.META.get("HTTP_AUTHORIZATION", "").split(None, 1)
    return bool(scheme) and scheme[0].lower() == "token"


class ConsoleOnly:
    """Runs the middleware named `wrapped` for every request but a token client's."""

    wrapped = ""

    def __init__(self, get_response):
        self.get_response = get_response
        self.inner = import_string(self.wrapped)(get_response)
        for hook in HOOKS:
            if hasattr(self.inner, hook):
                setattr(self, hook, self._hook(getattr(self.inner, hook)))

    def __call__(self, request):
        if is_token_request(request):
            return self.get_response(request)
        return self.inner(request)

    @staticmethod
    def _hook(method):
        def hook(request, *args):
            return None if is_token_request(request) else method(request, *args)

        return hook


class Sessions(ConsoleOnly):
    wrapped = "django.contrib.sessions.middleware.SessionMiddleware"

    def __call__(self, request):
        if is_token_request(request):
            response = self.get_response(request)
            # As SessionMiddleware does once the user was looked up: the answer's language
            # may follow the language cookie.
            patch_vary_headers(response, ("Cookie",))
            return response
        return self.inner(request)


class Csrf(ConsoleOnly):
    wrapped = "django.middleware.csrf.CsrfViewMiddleware"


class Authentication(ConsoleOnly):
    wrapped = "django.contrib.auth.middleware.AuthenticationMiddleware"


class RememberedLanguage(ConsoleOnly):
    wrapped = "timeline.language.RememberedLanguageMiddleware"


class Messages(ConsoleOnly):
    wrapped = "django.contrib.messages.middleware.MessageMiddleware"


class Htmx(ConsoleOnly):
    wrapped = "django_htmx.middleware.HtmxMiddleware"


class Axes(ConsoleOnly):
    wrapped = "axes.middleware.AxesMiddleware"

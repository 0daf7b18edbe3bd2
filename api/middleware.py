"""Under /api/ every answer is JSON error bodies (docs/api.md), whatever DEBUG is."""

from django.conf import settings
from django.http import JsonResponse
from django.utils.translation import gettext as _
from rest_framework.response import Response

from common.errors import error_body

from .converters import MalformedId
from .deprecation import deprecation_of
from .identifiers import ID_MESSAGE
from .problems import negotiate_error

API_PREFIX = "/api/"


class ApiErrorsMiddleware:
    """Turns Django's own 404 and 500 pages under /api/ into error bodies (docs/api.md), and answers
    a path id with whitespace or control characters in it (converters.MalformedId) with a 400.

    DRF's handler (api.exceptions) answers for everything raised inside an API view.
    What is left is Django's: a URL no route matches (with DEBUG on, a page listing every URL
    pattern) and an exception outside a view (with DEBUG on, the technical page with settings
    and the request body). Those are plain HttpResponses; DRF's own answers pass untouched.
    Every error answer, whoever made it, then becomes problem details when the client asks
    (api.problems).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not request.path.startswith(API_PREFIX):
            return response
        if response.has_header("Allow"):
            # DRF lists OPTIONS for every view, but the API answers it 405 (no metadata
            # class): `Allow` names only what a path takes.
            response["Allow"] = ", ".join(
                method for method in response["Allow"].split(", ") if method != "OPTIONS")
        return negotiate_error(request, self.as_error_body(request, response))

    @staticmethod
    def as_error_body(request, response):
        if isinstance(response, Response):
            return response
        if response.status_code == 404:
            body = error_body("NOT_FOUND", _("No such resource."), {"path": request.path})
            return JsonResponse(body, status=404)
        if response.status_code >= 500 and response.status_code != 503:  # 503: ours, JSON
            body = error_body("INTERNAL_ERROR",
                              _("Something went wrong on our side; it has been logged."))
            return JsonResponse(body, status=500)
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        malformed = {name: [str(ID_MESSAGE)] for name, value in view_kwargs.items()
                     if isinstance(value, MalformedId)}
        if malformed:
            body = error_body("VALIDATION_ERROR", _("The request is not valid."), malformed)
            return JsonResponse(body, status=400)
        return None


class ApiVersionMiddleware:
    """Every answer under /api/ names the contract it follows (`API-Version`, the schema's
    `info.version`): a client logs it beside what it got, and sees a new minor version arrive;
    an operation on its way out (api.deprecation) adds `Deprecation` and `Sunset` to each of
    its answers, refusals included (docs/api.md, "Versions")."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.version = settings.SPECTACULAR_SETTINGS["VERSION"]

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith(API_PREFIX):
            response["API-Version"] = self.version
            deprecation = getattr(request, "api_deprecation", None)
            if deprecation is not None:
                for name, value in deprecation.headers().items():
                    response[name] = value
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        request.api_deprecation = deprecation_of(view_func, request.method)

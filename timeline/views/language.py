"""The header's language switch: any signed-in console user sets their own language; the
sign-in page's switch, before anyone is signed in, keeps the choice in the language cookie."""

from django.http import HttpResponse, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext
from django.views import View

from coupons.capabilities import Capability
from timeline.language import LANGUAGE_CODES, console_language_set, remember_in_cookie
from timeline.views.access import ConsolePage


class LanguageSwitch(ConsolePage):
    # Everyone who may open the console may choose the language it speaks to them.
    capabilities = {"POST": Capability.READ}

    def post(self, request):
        language = request.POST.get("language", "")
        if language not in LANGUAGE_CODES:
            return _unknown_language()
        console_language_set(request=request, language=language)
        return HttpResponseRedirect(_back(request))


class SignInLanguage(View):
    """The sign-in page's switch: nobody is signed in yet, so the cookie remembers it (and the
    person's own choice, once signed in, wins over it)."""

    def post(self, request):
        language = request.POST.get("language", "")
        if language not in LANGUAGE_CODES:
            return _unknown_language()
        response = HttpResponseRedirect(_back(request))
        remember_in_cookie(response, language)
        return response


def _unknown_language() -> HttpResponse:
    return HttpResponse(gettext("Choose one of the console's languages."), status=400,
                        content_type="text/plain; charset=utf-8")


def _back(request) -> str:
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
            back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        back = "/"
    return back

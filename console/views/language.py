"""The header's language switch: any signed-in console user sets their own language."""

from django.http import HttpResponse, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext

from console.language import LANGUAGE_CODES, console_language_set
from console.views.access import ConsolePage
from coupons.capabilities import Capability


class LanguageSwitch(ConsolePage):
    # Everyone who may open the console may choose the language it speaks to them.
    capabilities = {"POST": Capability.READ}

    def post(self, request):
        language = request.POST.get("language", "")
        if language not in LANGUAGE_CODES:
            return HttpResponse(
                gettext("Choose one of the console's languages."), status=400,
                content_type="text/plain; charset=utf-8")
        console_language_set(request=request, language=language)
        back = request.POST.get("next", "")
        if not url_has_allowed_host_and_scheme(
                back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
            back = "/"
        return HttpResponseRedirect(back)

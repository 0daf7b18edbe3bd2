"""The reader's time zone: any signed-in console user picks the zone moments are written in."""

from django import forms
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _

from coupons.capabilities import Capability
from timeline.time_zones import (
    BROWSER_COOKIE,
    SESSION_KEY,
    console_time_zone_set,
    zone_names,
    zone_or_none,
)
from timeline.views.access import ConsolePage


class TimeZoneForm(forms.Form):
    zone = forms.ChoiceField(label=_("Time zone"), required=False)
    next = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, browser_zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        browser = (_("My browser's zone (%(zone)s)") % {"zone": browser_zone} if browser_zone
                   else _("My browser's zone"))
        self.fields["zone"].choices = [("", browser), *((z, z) for z in sorted(zone_names()))]


class TimeZonePage(ConsolePage):
    # Everyone who may open the console chooses how it writes moments to them.
    capabilities = {"GET": Capability.READ, "POST": Capability.READ}

    def form(self, request, data=None):
        browser = zone_or_none(request.COOKIES.get(BROWSER_COOKIE))
        initial = {"zone": request.session.get(SESSION_KEY, ""),
                   "next": request.GET.get("next", "")}
        return TimeZoneForm(data, initial=initial, browser_zone=browser.key if browser else "")

    def get(self, request):
        return render(request, "timeline/time_zone.html", {"form": self.form(request)})

    def post(self, request):
        form = self.form(request, request.POST)
        if not form.is_valid():
            return render(request, "timeline/time_zone.html", {"form": form}, status=400)
        console_time_zone_set(request=request, zone=form.cleaned_data["zone"])
        back = form.cleaned_data["next"]
        if not url_has_allowed_host_and_scheme(
                back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
            back = "/"
        return HttpResponseRedirect(back)

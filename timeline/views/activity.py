"""Activity: who viewed, did and was refused what, per person and per coupon (auditors)."""

from django import forms
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _

from timeline.activity import ACTIONS, REFUSALS, VIEWS, ActivityFilters, activity_page
from timeline.capabilities import ConsoleCapability
from timeline.views.access import ConsolePage

KIND_LABELS = {VIEWS: _("Views and exports"), ACTIONS: _("Actions"),
               REFUSALS: _("Refused attempts")}


class ActivityForm(forms.Form):
    person = forms.CharField(required=False, max_length=128, strip=True, label=_("Person"),
                             help_text=_("A sign-in name (alice) or a client (client:shop)."))
    coupon = forms.IntegerField(required=False, min_value=1, max_value=2**63 - 1,
                                label=_("Coupon id"))
    kind = forms.ChoiceField(required=False, label=_("Show"),
                             choices=[("", _("Everything")), *KIND_LABELS.items()])

    def filters(self) -> ActivityFilters:
        person = self.cleaned_data["person"]
        if person and ":" not in person:
            person = f"user:{person}"  # as the logs name a signed-in person
        return ActivityFilters(actor=person, coupon_id=self.cleaned_data["coupon"],
                               kind=self.cleaned_data["kind"])


class Activity(ConsolePage):
    capabilities = {"GET": ConsoleCapability.VIEW_ACTIVITY}

    def get(self, request):
        form = ActivityForm(request.GET)
        if not form.is_valid():
            return render(request, "timeline/activity.html", {"form": form}, status=400)
        page = activity_page(filters=form.filters(), cursor=request.GET.get("before"))
        query = request.GET.copy()
        query.pop("before", None)
        return render(request, "timeline/activity.html", {
            "form": form, "entries": page.entries, "kind_labels": KIND_LABELS,
            "older": page.older, "query": query.urlencode(),
            "paged": bool(request.GET.get("before")),
        })

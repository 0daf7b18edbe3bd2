"""Save and delete a person's named filters; applying one is a plain link to the list."""

from django import forms
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from coupons.capabilities import Capability
from coupons.errors import CouponError
from timeline.saved_filters import PAGES, filter_delete, filter_save
from timeline.views.access import ConsolePage


class SaveFilterForm(forms.Form):
    page = forms.ChoiceField(choices=[(page, page) for page in PAGES])
    name = forms.CharField(max_length=80, strip=True, label=gettext_lazy("Name"))
    query = forms.CharField(max_length=2000, required=False, strip=False)


def back_to(page: str, query: str = "") -> str:
    return f"{reverse(f'console:{page}')}?{query}" if query else reverse(f"console:{page}")


class FilterSave(ConsolePage):
    # Anyone who reads the lists keeps their own filters.
    capabilities = {"POST": Capability.READ}

    def post(self, request):
        form = SaveFilterForm(request.POST)
        if not form.is_valid():
            page = request.POST.get("page")
            messages.error(request, _("The filter was not saved: give it a name."))
            return redirect(back_to(page if page in PAGES else "search",
                                    request.POST.get("query", "")))
        data = form.cleaned_data
        try:
            kept = filter_save(user=request.user, page=data["page"], name=data["name"],
                               query=data["query"])
        except CouponError as refusal:
            reasons = " ".join(str(reason) for reason in refusal.details.values())
            messages.error(request, _("The filter was not saved: %(reason)s") % {
                "reason": reasons})
            return redirect(back_to(data["page"], data["query"]))
        messages.success(request, _("Filter “%(name)s” saved.") % {"name": kept.name})
        return redirect(back_to(kept.page, kept.query))


class FilterDelete(ConsolePage):
    capabilities = {"POST": Capability.READ}

    def post(self, request, filter_id: int):
        kept = filter_delete(user=request.user, filter_id=filter_id)
        if kept is None:
            raise Http404("No such filter of yours.")
        messages.success(request, _("Filter “%(name)s” deleted.") % {"name": kept.name})
        return redirect(back_to(kept.page))

"""Search: one box for any id; straight to the coupon when exactly one matches, else a list."""

from django import forms
from django.core.paginator import InvalidPage
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from coupons.selectors import template_list
from timeline import glossary
from timeline.capabilities import can_read_notes
from timeline.notes import notes_matching
from timeline.search import (
    CUSTOMER_KIND_LABELS,
    FRAGMENT_MIN,
    KIND_LABELS,
    SORTS,
    VALIDITY,
    CappedPaginator,
    SearchFilters,
    coupon_search,
    customers_matching,
    matched_by,
    matched_kinds,
    template_ids,
)
from timeline.views.access import ConsolePage

PAGE_SIZE = 25


class SearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=128, strip=True, label=_("Id"))
    status = forms.ChoiceField(required=False,
                               choices=[("", _("Any status")), *glossary.choices(glossary.STATES)],
                               widget=forms.Select(attrs={"aria-label": _("Status")}))
    template = forms.TypedChoiceField(required=False, coerce=int, empty_value=None,
                                      widget=forms.Select(attrs={"aria-label": _("Template")}))
    validity = forms.ChoiceField(required=False, choices=[("", _("Any validity")),
                                                          *VALIDITY.items()],
                                 widget=forms.Select(attrs={"aria-label": _("Validity")}))
    open_case = forms.BooleanField(required=False, label=_("Has an open case"))
    store = forms.CharField(required=False, max_length=64, strip=True,
                            widget=forms.TextInput(attrs={"aria-label": _("Store id"),
                                                          "placeholder": _("Store id")}))
    channel = forms.ChoiceField(required=False,
                                choices=[("", _("Any channel")),
                                         *glossary.choices(glossary.CHANNELS)],
                                widget=forms.Select(attrs={"aria-label": _("Channel")}))
    sort = forms.ChoiceField(required=False, choices=[
        (name, name) for column in SORTS for name in (column, f"-{column}")])
    page = forms.IntegerField(required=False, min_value=1)

    def __init__(self, *args, templates, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["template"].choices = [("", _("Any template")),
                                           *((t.pk, t.code) for t in templates)]

    def filters(self) -> SearchFilters:
        data = self.cleaned_data
        sort = data["sort"] or "id"
        return SearchFilters(
            status=data["status"], template_id=data["template"], validity=data["validity"],
            open_case=data["open_case"], store=data["store"], channel=data["channel"],
            sort=sort.lstrip("-"), descending=sort.startswith("-"),
        )


class Search(ConsolePage):
    audit_page = "search"

    def get(self, request):
        templates = list(template_list())
        form = SearchForm(request.GET, templates=templates)
        context = {"form": form, "query": request.GET.get("q", "").strip()}
        if not form.is_valid():
            context["bad_values"] = [(name, request.GET.get(name, ""), errors)
                                     for name, errors in form.errors.items()]
            return render(request, "timeline/search.html", context, status=400)
        text, filters = form.cleaned_data["q"], form.filters()
        context["notes"] = notes_matching(text, can_read=can_read_notes(request.user))
        context["customers"] = [
            {"match": match, "label": CUSTOMER_KIND_LABELS[match.kind]}
            for match in (customers_matching(text) if text else [])]
        if not text and not filters.narrowing:
            return render(request, "timeline/search.html", context)
        named_templates = template_ids(text, templates) if text else []
        paginator = CappedPaginator(coupon_search(text=text or None, filters=filters,
                                                  templates=named_templates), PAGE_SIZE)
        untouched_list = not filters.narrowing and not form.cleaned_data["sort"]
        if text and untouched_list and paginator.count == 1 and not context["customers"]:
            return redirect(reverse("console:coupon", args=[paginator.page(1)[0].pk]))
        context["page_query"] = query_without(request, "page")
        try:
            page = paginator.page(form.cleaned_data["page"] or 1)
        except InvalidPage:
            context["page_error"] = ngettext(
                "There is no page %(page)s: the list has %(pages)s page.",
                "There is no page %(page)s: the list has %(pages)s pages.",
                paginator.num_pages) % {"page": form.cleaned_data["page"],
                                        "pages": paginator.num_pages}
            return render(request, "timeline/search.html", context, status=404)
        matches = matched_by(text, page.object_list) if text else {}
        for coupon in page:
            coupon.matched_by = format_html_join(
                "; ", "{} {}", ((KIND_LABELS[match.kind], marked(match.value, text))
                               for match in matches.get(coupon.pk, [])))
        kinds = ([KIND_LABELS[kind] for kind in matched_kinds(text, named_templates)]
                 if text and paginator.count else [])
        context.update(page=page, filters=filters, matched_kinds=kinds,
                       sort_links=sort_links(request, filters))
        return render(request, "timeline/search.html", context)


def marked(value: str, text: str) -> str:
    """`value` as code with the part that matched `text` (any case) in a <mark>."""
    start = value.upper().find(text.upper())
    if start < 0 or (start > 0 and len(text) < FRAGMENT_MIN):
        return format_html("<code>{}</code>", value)
    end = start + len(text)
    return format_html("<code>{}<mark>{}</mark>{}</code>", value[:start], value[start:end],
                       value[end:])


def query_without(request, *names) -> str:
    params = request.GET.copy()
    for name in names:
        params.pop(name, None)
    return params.urlencode()


def sort_links(request, filters: SearchFilters) -> dict[str, dict]:
    """For each sortable column: the link that sorts by it (again: the other way) and its
    aria-sort state."""
    base = query_without(request, "sort", "page")
    links = {}
    for column in SORTS:
        current = filters.sort == column
        flip = current and not filters.descending
        links[column] = {
            "url": f"?{base}&sort={'-' if flip else ''}{column}".replace("?&", "?"),
            "aria": ("descending" if filters.descending else "ascending") if current else "none",
        }
    return links

"""CSV exports of the search list and the queues: the page's own filters, streamed, recorded.

Each export reads the rows the page's selector gives for the same query string (search form,
queue `?status=`), all of them rather than one page, and is kept in the view log as an EXPORT
of that page with its query, before the first row leaves.
"""

from django.http import StreamingHttpResponse
from django.shortcuts import render

from coupons.identity import can_see_details
from coupons.models import ConflictCase
from coupons.selectors import template_list
from refunds.models import Compensation
from timeline.audit import record_view
from timeline.capabilities import ConsoleCapability
from timeline.exports import (
    CASE_COLUMNS,
    CHUNK,
    COMPENSATION_COLUMNS,
    DECISION_COLUMNS,
    SEARCH_COLUMNS,
    csv_lines,
    visible_columns,
)
from timeline.models import ViewRecord
from timeline.queue_selectors import (
    APPROVAL_FILTERS,
    CASE_FILTERS,
    COMPENSATION_FILTERS,
    approval_queue,
    case_queue,
    compensation_queue,
)
from timeline.search import coupon_search
from timeline.views.access import ConsolePage
from timeline.views.search import SearchForm


def streamed(request, *, page: str, rows, columns) -> StreamingHttpResponse:
    record_view(request, page=page, kind=ViewRecord.Kind.EXPORT)
    response = StreamingHttpResponse(csv_lines(rows, columns),
                                     content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{page}.csv"'
    return response


class QueueExport(ConsolePage):
    capabilities = {"GET": ConsoleCapability.EXPORT_LISTS}
    page = ""
    filters: dict = {}
    default = ""
    model = None
    columns: list = []

    def select(self, shown):
        raise NotImplementedError

    def get(self, request):
        shown = request.GET.get("status", self.default)
        if shown not in self.filters:
            shown = self.default  # as the page: an unknown filter shows the default list
        columns = visible_columns(self.model, self.columns,
                                  can_see_details=can_see_details(request.user))
        rows = self.select(shown).iterator(chunk_size=CHUNK)
        return streamed(request, page=self.page, rows=rows, columns=columns)


class CaseExport(QueueExport):
    page, filters, default, model, columns = "cases", CASE_FILTERS, "all", ConflictCase, \
        CASE_COLUMNS

    def select(self, shown):
        return case_queue(shown=shown)


class ApprovalExport(QueueExport):
    page, filters, default, model, columns = "approvals", APPROVAL_FILTERS, "pending", None, \
        DECISION_COLUMNS

    def select(self, shown):
        return approval_queue(shown=shown)


class CompensationExport(QueueExport):
    page, filters, default, model, columns = "compensations", COMPENSATION_FILTERS, "all", \
        Compensation, COMPENSATION_COLUMNS

    def select(self, shown):
        return compensation_queue(shown=shown)


class SearchExport(ConsolePage):
    capabilities = {"GET": ConsoleCapability.EXPORT_LISTS}

    def get(self, request):
        form = SearchForm(request.GET, templates=list(template_list()))
        if not form.is_valid():
            return render(request, "timeline/search.html", {
                "form": form, "query": request.GET.get("q", "").strip(),
                "bad_values": [(name, request.GET.get(name, ""), errors)
                               for name, errors in form.errors.items()],
            }, status=400)
        text, filters = form.cleaned_data["q"] or None, form.filters()
        # As the page: no text and no filter is no list (not every coupon there is).
        rows = coupon_search(text=text, filters=filters).iterator(chunk_size=CHUNK) \
            if text or filters.narrowing else []
        return streamed(request, page="search", rows=rows, columns=SEARCH_COLUMNS)

"""What the three queue lists share: the status filter and the page of items."""

from django.core.paginator import Paginator

from timeline.queue_selectors import FILTER_LABELS

PER_PAGE = 25


def queue_page(request, *, filters: dict, default: str, select, make_item) -> dict:
    """The context of a queue list: the chosen filter, one page of items, the filter links."""
    shown = request.GET.get("status", default)
    if shown not in filters:
        shown = default
    page = Paginator(select(shown=shown), PER_PAGE).get_page(request.GET.get("page"))
    return {
        "shown": shown,
        "filters": [(name, FILTER_LABELS[name]) for name in filters],
        "page": page,
        "items": [make_item(request, record) for record in page.object_list],
    }

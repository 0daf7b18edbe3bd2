"""Named filters a person keeps per list page: save the query they are looking at, apply it
with one link, delete it. Personal settings, not evidence: rows change and go."""

from urllib.parse import urlencode

from django.db import IntegrityError, transaction
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.errors import ValidationFailed
from timeline.models import SavedFilter

# The list pages that keep filters, by their URL name; the paging parameters are not a filter.
PAGES = ("search", "cases", "approvals", "compensations")
NOT_FILTERS = ("page", "before")
PER_PERSON_PAGE = 50
QUERY_MAX = SavedFilter._meta.get_field("query").max_length


def filter_query(query: str) -> str:
    """The query string without its paging: what a saved filter keeps."""
    params = QueryDict(query)
    return urlencode([(name, value) for name, values in params.lists() if name not in NOT_FILTERS
                      for value in values])


def saved_filters(*, user, page: str) -> list[SavedFilter]:
    return list(SavedFilter.objects.filter(user=user, page=page)[:PER_PERSON_PAGE])


def filter_save(*, user, page: str, name: str, query: str) -> SavedFilter:
    """Saves `query` under `name` (a name used again on that page is refused, not replaced)."""
    query = filter_query(query)
    if page not in PAGES:
        raise ValidationFailed(page=_("No list page of that name keeps filters."))
    if len(query) > QUERY_MAX:
        raise ValidationFailed(query=_("This filter is too long to keep."))
    if SavedFilter.objects.filter(user=user, page=page).count() >= PER_PERSON_PAGE:
        raise ValidationFailed(name=_("You keep 50 filters on this page already: delete one."))
    try:
        with transaction.atomic():
            return SavedFilter.objects.create(user=user, page=page, name=name, query=query,
                                              created_at=clock.now())
    except IntegrityError:
        raise ValidationFailed(name=_("You already keep a filter of this name here.")) from None


def filter_delete(*, user, filter_id) -> SavedFilter | None:
    """Deletes one of the person's own filters; None when they have no such filter."""
    kept = SavedFilter.objects.filter(user=user, pk=filter_id).first()
    if kept is not None:
        kept.delete()
    return kept

"""Every list's pages (docs/api.md, "Pages and cursors"): page numbers by default, a signed
cursor for a client that walks a growing list with `?cursor=`; both with a `Link` header
(RFC 8288)."""

import json
import operator
from datetime import datetime
from functools import reduce

from django.core import signing
from django.db.models import Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from coupons.errors import CouponError

CURSOR_SALT = "api.pagination.cursor"
# What sign_cursor writes (django.core.signing.dumps): the position in URL-safe base64 ("."
# first when compressed), the time in base62 and the SHA-256 signature in URL-safe base64; or
# "" for the first page. The schema states it, so a tool does not take any text for a cursor.
CURSOR_PATTERN = r"^(?:|\.?[-_A-Za-z0-9]+:[0-9A-Za-z]+:[-_A-Za-z0-9]{43})$"


class InvalidCursor(CouponError):
    """A cursor this server did not sign, or signed for another list."""

    code = "INVALID_CURSOR"
    http_status = 400
    message = gettext_lazy("The cursor is not one this list handed out; start again from the "
                           "first page.")


def sign_cursor(path: str, position) -> str:
    """Opaque to the client and tamper-proof: the list's path and the last row's sort key,
    signed with the server's secret key."""
    return signing.dumps({"path": path, "after": position}, salt=CURSOR_SALT, compress=True,
                         serializer=CursorSerializer)


def read_cursor(path: str, text: str):
    try:
        cursor = signing.loads(text, salt=CURSOR_SALT)
    except signing.BadSignature as refused:
        raise InvalidCursor(cursor=text[:100]) from refused
    if not isinstance(cursor, dict) or cursor.get("path") != path:
        raise InvalidCursor(cursor=text[:100])
    return cursor["after"]


def as_text(value):
    # To the microsecond: a sort key that lost some would skip or repeat rows at a page's edge.
    return value.isoformat() if isinstance(value, datetime) else str(value)


class CursorSerializer(signing.JSONSerializer):
    # A sort key may hold times and decimals; the filter reads them back from their text.
    def dumps(self, obj):
        return json.dumps(obj, separators=(",", ":"), default=as_text).encode("latin-1")


def keyset_ordering(queryset) -> list[str]:
    """The queryset's own order, with the primary key last so that no two rows tie."""
    ordering = list(queryset.query.order_by or queryset.model._meta.ordering or [])
    if not any(field.lstrip("-") in ("pk", "id") for field in ordering):
        descending = bool(ordering) and ordering[-1].startswith("-")
        ordering.append("-pk" if descending else "pk")
    return ordering


def after_position(ordering: list[str], position: list) -> Q:
    """The rows that come after `position` in `ordering` (one value per field)."""
    def past(depth: int, field: str) -> Q:
        equal = {name.lstrip("-"): value
                 for name, value in zip(ordering[:depth], position, strict=False)}
        lookup = "lt" if field.startswith("-") else "gt"
        return Q(**equal, **{f"{field.lstrip('-')}__{lookup}": position[depth]})

    return reduce(operator.or_, (past(depth, field) for depth, field in enumerate(ordering)))


def position_of(row, ordering: list[str]) -> list:
    values = []
    for field in ordering:
        value = row
        for part in field.lstrip("-").split("__"):
            value = getattr(value, part)
        values.append(getattr(value, "pk", value))
    return values


class StandardPagination(PageNumberPagination):
    """Pages of 50 by default; `page_size` 1 to 200. A bad `page_size` is a 400 (not silently
    the default), a `page` that is not a page number of the list a 404, as the schema says.

    `?cursor=` (empty for the first page) switches to cursor pages: the same body, `next` a
    link with the cursor of the page after, `previous` null; a changed cursor is a 400
    INVALID_CURSOR; `page` beside it is ignored. Both modes send `Link` with what `next` and
    `previous` say."""

    page_size = 50
    page_size_query_param = "page_size"
    cursor_query_param = "cursor"
    max_page_size = 200
    last_page_strings = ()

    def get_page_size(self, request):
        sent = request.query_params.get(self.page_size_query_param)
        if sent is None:
            return self.page_size
        if not (sent.isascii() and sent.isdigit() and 1 <= int(sent) <= self.max_page_size):
            raise ValidationError(
                {self.page_size_query_param: [_("A whole number from 1 to %(max)s.")
                                              % {"max": self.max_page_size}]}
            )
        return int(sent)

    def wants_cursor(self, request) -> bool:
        # With both, the cursor wins and `page` is ignored: OpenAPI 3.0 cannot state "one of
        # two query parameters", and a request the schema allows is not refused.
        return self.cursor_query_param in request.query_params

    def paginate_queryset(self, queryset, request, view=None):
        self.cursor_mode = self.wants_cursor(request)
        if not self.cursor_mode:
            return super().paginate_queryset(queryset, request, view)
        ordering = keyset_ordering(queryset)
        queryset = queryset.order_by(*ordering)

        def fetch(after, size):
            rows = queryset if after is None else queryset.filter(
                after_position(ordering, after))
            rows = list(rows[:size + 1])
            more = len(rows) > size
            return rows[:size], position_of(rows[size - 1], ordering) if more else None

        return self.paginate_by_key(request, fetch, count=queryset.count)

    def paginate_by_key(self, request, fetch, *, count):
        """A cursor page of any list that `fetch(after, size)` reads: the rows after a
        position (None: from the first), and the position of the last one when more follow.
        `count()` answers the list's length."""
        self.cursor_mode, self.request = True, request
        sent = request.query_params.get(self.cursor_query_param, "")
        after = read_cursor(request.path, sent) if sent else None
        rows, self.next_position = fetch(after, self.get_page_size(request))
        self.total = count()
        return rows

    def cursor_link(self, position) -> str | None:
        if position is None:
            return None
        url = remove_query_param(self.request.build_absolute_uri(), self.page_query_param)
        return replace_query_param(url, self.cursor_query_param,
                                   sign_cursor(self.request.path, position))

    def get_paginated_response(self, data):
        if getattr(self, "cursor_mode", False):
            body = {"count": self.total, "next": self.cursor_link(self.next_position),
                    "previous": None, "results": data}
        else:
            body = super().get_paginated_response(data).data
        links = [f'<{body[name]}>; rel="{rel}"'
                 for name, rel in (("next", "next"), ("previous", "prev")) if body[name]]
        return Response(body, headers={"Link": ", ".join(links)} if links else None)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        bounds = {
            self.page_query_param: {"type": "integer", "minimum": 1},
            self.page_size_query_param: {"type": "integer", "minimum": 1,
                                         "maximum": self.max_page_size},
        }
        for parameter in parameters:
            parameter["schema"] = bounds[parameter["name"]]
        parameters.append({
            "name": self.cursor_query_param, "in": "query", "required": False,
            "description": "Cursor pages instead of page numbers: empty for the first page, "
                           "then the cursor of the `next` link (opaque and signed; a changed "
                           "one is 400 INVALID_CURSOR). With it, `page` is ignored.",
            "schema": {"type": "string", "pattern": CURSOR_PATTERN},
        })
        return parameters

    def get_paginated_response_schema(self, schema):
        # `next` and `previous` are always sent, null at either end of the list.
        paginated = super().get_paginated_response_schema(schema)
        paginated["required"] = sorted(paginated["properties"])
        return paginated

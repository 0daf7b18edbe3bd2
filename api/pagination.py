from django.utils.translation import gettext as _
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination

# A cursor that is not one this server signed (api.pagination.CursorPagination).
CURSOR_CODES = ("INVALID_CURSOR",)


class StandardPagination(PageNumberPagination):
    """Pages of 50 by default; `page_size` 1 to 200. A bad `page_size` is a 400 (not silently
    the default), a `page` that is not a page number of the list a 404, as the schema says."""

    page_size = 50
    page_size_query_param = "page_size"
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

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        bounds = {
            self.page_query_param: {"type": "integer", "minimum": 1},
            self.page_size_query_param: {"type": "integer", "minimum": 1,
                                         "maximum": self.max_page_size},
        }
        for parameter in parameters:
            parameter["schema"] = bounds[parameter["name"]]
        return parameters

    def get_paginated_response_schema(self, schema):
        # `next` and `previous` are always sent, null at either end of the list.
        paginated = super().get_paginated_response_schema(schema)
        paginated["required"] = sorted(paginated["properties"])
        return paginated

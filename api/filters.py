"""Query-parameter filters every list endpoint shares: database ids and other services' ids."""

import django_filters
from drf_spectacular.utils import extend_schema_field

from .fields import MAX_DB_ID
from .identifiers import DatabaseIdFormField, ExternalIdFormField, id_schema


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_DB_ID})
class IdFilter(django_filters.NumberFilter):
    """A database id: a whole number that fits a bigint (a larger one is a 400, not an error
    from the database); `?coupon_id=` (empty) is a 400, not "no filter"."""

    field_class = DatabaseIdFormField

    def __init__(self, *args, **kwargs):
        super().__init__(*args, min_value=1, max_value=MAX_DB_ID, **kwargs)


@extend_schema_field(id_schema(64))
class ExternalIdFilter(django_filters.CharFilter):
    """An id another service made (an order, a user, a refund): at most 64 characters, taken
    as sent (api.identifiers)."""

    field_class = ExternalIdFormField

    def __init__(self, *args, **kwargs):
        super().__init__(*args, max_length=64, **kwargs)

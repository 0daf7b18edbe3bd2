"""What is on its way out says so (docs/api.md, Versions): one decorator on a view's method;
the schema marks that operation `deprecated` (api.schema) and every answer it gives, a refusal
too, carries `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) (api.middleware)."""

import calendar
from dataclasses import dataclass
from datetime import date

from django.utils.http import http_date


@dataclass(frozen=True)
class Deprecation:
    deprecated_on: date
    sunset_on: date  # at least six months later (docs/api.md)
    successor: str = ""  # what to use instead, in the schema's description

    def __post_init__(self):
        if (self.sunset_on - self.deprecated_on).days < 182:
            raise ValueError("A sunset comes at least six months after the deprecation.")

    def headers(self) -> dict[str, str]:
        since = calendar.timegm(self.deprecated_on.timetuple())
        until = calendar.timegm(self.sunset_on.timetuple())
        # RFC 9745: a Structured Field Date (@ and seconds); RFC 8594: an HTTP-date.
        return {"Deprecation": f"@{since}", "Sunset": http_date(until)}


def deprecated(*, on: date, sunset: date, successor: str = ""):
    """Marks a view's method (`def get(self, request, ...)`) as on its way out."""

    def mark(handler):
        handler.deprecation = Deprecation(on, sunset, successor)
        return handler

    return mark


def deprecation_of(view_func, method: str) -> Deprecation | None:
    """The deprecation of the method a request reaches: `view_func` is a DRF view (`cls`, from
    as_view) or a view class."""
    view = getattr(view_func, "cls", view_func)
    return getattr(getattr(view, method.lower(), None), "deprecation", None)

"""`<dbid:...>` in the API's paths: a positive id that fits a bigint, so a huge number is a
404, not a database error. Registered once, when the first urls module imports this.

A segment holding whitespace or a control character (`/coupons/%201`, `/coupons/1%0A`) is
matched too, as a `MalformedId`, so that ApiErrorsMiddleware answers it with a 400 like any
other id sent with surrounding whitespace (api.identifiers), not a silent 404.
"""

import re

from django.urls import register_converter

DIGITS = "[0-9]{1,18}"
# Controls and what str.strip() or ECMAScript call whitespace (api.identifiers).
UNTRIMMED = "\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


class MalformedId(str):
    """A path id as sent, with whitespace or control characters in it."""


class DatabaseIdConverter:
    regex = f"{DIGITS}|[^/]*[{UNTRIMMED}][^/]*"

    def to_python(self, value):
        return int(value) if re.fullmatch(DIGITS, value) else MalformedId(value)

    def to_url(self, value):
        return str(value)


register_converter(DatabaseIdConverter, "dbid")

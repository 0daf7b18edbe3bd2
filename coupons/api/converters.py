"""`<dbid:...>` in the API's paths: a positive id that fits a bigint, so a huge number is a
404, not a database error. Registered once, when the first urls module imports this."""

from django.urls import register_converter


class DatabaseIdConverter:
    regex = "[0-9]{1,18}"

    def to_python(self, value):
        return int(value)

    def to_url(self, value):
        return str(value)


register_converter(DatabaseIdConverter, "dbid")

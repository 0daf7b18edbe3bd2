"""The error body (docs/api.md), once; api.schema puts it under every operation's errors."""

from rest_framework import serializers


class ErrorDetail(serializers.Serializer):
    code = serializers.CharField(help_text="A stable error code (docs/api.md), e.g. INVALID_STATE.")
    message = serializers.CharField()
    details = serializers.DictField(help_text=(
        "400: the fields at fault, e.g. "
        '{"rules": {"2": {"when": {"refunded_share_min": ["must be between 0 and 1"]}}}}; '
        "403: the missing `capability`; 409: `current_state` and `current_version`."))


class ErrorOutput(serializers.Serializer):
    error = ErrorDetail()


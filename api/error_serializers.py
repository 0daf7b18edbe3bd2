"""The error body (docs/api.md), once, in its two forms: the envelope and the problem details
(api.problems); api.schema puts both under every operation's errors."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.exceptions import DRF_CODES, UNEXPECTED_CODES
from api.pagination import InvalidCursor
from coupons.errors import CouponError


def domain_errors(cls=CouponError):
    for sub in cls.__subclasses__():
        yield sub
        yield from domain_errors(sub)


# Every code an answer can carry: the domain's error classes, the framework's refusals mapped
# in api.exceptions, and what nobody expected. A generated client gets them as one enum.
# The console's own refusals (a staff note's form) are answered on its pages, never here:
# left out by module, so the enum does not depend on which modules were imported first.
ERROR_CODES = sorted({error.code for error in domain_errors() if "code" in vars(error)
                      and not error.__module__.startswith("console.")}
                     | set(DRF_CODES.values()) | set(UNEXPECTED_CODES) | {InvalidCursor.code})


# The details keys whose meaning is the same under every code that sends them, declared (a
# 400's field names and a code's own facts stay open beside them).
KNOWN_DETAILS = {
    "type": "object",
    "properties": {
        "current_state": {"type": "string", "description": (
            "409: the state (coupon) or status (refund decision, compensation, case, finding, "
            "policy version) the object is in now.")},
        "current_version": {"type": "integer", "description": (
            "409: the coupon's state_version, the template's or the policy's version now.")},
        "capability": {"type": "string", "description": "403: the capability it needs."},
        "retry_after": {"type": "integer", "minimum": 0, "description": (
            "429, 503 and COUPON_BUSY: the seconds `Retry-After` gives.")},
        "max_bytes": {"type": "integer", "description": "413: the largest body taken."},
    },
    "additionalProperties": {},
}


@extend_schema_field(KNOWN_DETAILS)
class DetailsField(serializers.DictField):
    """The details unchanged; the keys every code uses alike declared."""


class ErrorDetail(serializers.Serializer):
    code = serializers.ChoiceField(choices=ERROR_CODES, help_text=(
        "A stable error code; docs/api.md (Errors) says when each one happens."))
    message = serializers.CharField()
    details = DetailsField(help_text=(
        "400: the fields at fault, e.g. "
        '{"rules": {"2": {"when": {"refunded_share_min": ["must be between 0 and 1"]}}}}; '
        "403: the missing `capability`; 409: `current_state` and `current_version`; 429 and 503: "
        "`retry_after`, the seconds the `Retry-After` header gives, as an integer."))


class ErrorOutput(serializers.Serializer):
    error = ErrorDetail()



class ProblemOutput(serializers.Serializer):
    """RFC 9457 problem details, answered for `Accept: application/problem+json`."""

    type = serializers.CharField(help_text=(
        "The code's entry in the API documentation (docs/api.md, Error codes): a URI reference "
        "ending in `#` and the code in lower case."))
    title = serializers.CharField(help_text="The code's short title, the same every time.")
    status = serializers.IntegerField(min_value=400, max_value=599)
    detail = serializers.CharField(help_text="What went wrong this time (the envelope's message).")
    code = serializers.ChoiceField(choices=ERROR_CODES)
    details = DetailsField(help_text="The envelope's details.")
    error = ErrorDetail(help_text="Today's envelope, unchanged, for code written against it.")

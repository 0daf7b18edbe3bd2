"""Running a command behind an Idempotency-Key: validate, claim, run once, answer."""

import re

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

from coupons.errors import IdempotencyKeyMissing, ValidationFailed
from coupons.identity import actor_of, idempotency_scope_of
from coupons.models import ServiceClient
from coupons.write.idempotency import run_once
from coupons.write.idempotency_seal import request_fingerprint

IDEMPOTENCY_KEY_MAX_LENGTH = 255
# Printable ASCII with at least one visible character: a NUL or control character cannot be
# stored (PostgreSQL refuses NUL in text), and a header value outside ASCII arrives mangled.
IDEMPOTENCY_KEY_PATTERN = r"^[ -~]*[!-~][ -~]*$"
# The Idempotency-Key draft makes the value a Structured Field string (RFC 8941): quoted, with
# backslash escaping only a quote or a backslash. Clients written before it send the bare value,
# so both forms name one key: `"k-1"` and `k-1` replay each other rather than run twice.
# As a Structured Field Item the string may carry parameters (`"k-1";v=1`, RFC 9651 3.1.2):
# they are taken and ignored, so the key is still the string.
SF_BARE_ITEM = (r'-?[0-9]{1,15}(?:\.[0-9]{1,3})?'  # integer or decimal
                r'|"(?:[ !#-\[\]-~]|\\["\\])*"'  # string
                r"|[A-Za-z*][-!#$%&'*+.^_`|~0-9A-Za-z:/]*"  # token
                r'|:[A-Za-z0-9+/=]*:'  # byte sequence
                r'|\?[01]'  # boolean
                r'|@-?[0-9]{1,15}'  # date
                r'|%"(?:[ !#$&-\[\]-~]|%[0-9a-f]{2}|\\["\\])*"')  # display string
SF_PARAMETERS = rf"(?:; *[a-z*][-a-z0-9_.*]*(?:=(?:{SF_BARE_ITEM}))?)*"
SF_STRING = re.compile(rf'"((?:[ !#-\[\]-~]|\\["\\])*)"{SF_PARAMETERS}')

IDEMPOTENCY_KEY_HEADER = OpenApiParameter(
    "Idempotency-Key", location=OpenApiParameter.HEADER, required=True,
    description=(
        "The business key of this command, 1 to 255 printable ASCII characters (a UUID is "
        "typical; surrounding spaces are ignored), bare or as a Structured Field string "
        "(RFC 8941, `\"k-1\"`), parameters after it taken and ignored (`\"k-1\";v=1`, "
        "RFC 9651): all these forms name one key. Same key + same body answers the stored "
        "result without a second effect (header `Idempotent-Replayed: true`); same key + "
        "another body is refused (422 IDEMPOTENCY_KEY_REUSED); the same key while its first "
        "request still runs answers 409 IDEMPOTENCY_REQUEST_IN_PROGRESS. Keys are scoped to "
        "the caller and kept for IDEMPOTENCY_RETENTION_HOURS (README) after completion. "
        "Missing or blank: 400 IDEMPOTENCY_KEY_MISSING; too long, other characters or a "
        "malformed quoted string: 400 VALIDATION_ERROR."
    ),
    type={"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX_LENGTH,
          "pattern": IDEMPOTENCY_KEY_PATTERN},
)


def client_id_of(user) -> int | None:
    """The service client behind a request, so the leases it takes answer only to it."""
    return user.pk if isinstance(user, ServiceClient) else None


def key_refused(message) -> ValidationFailed:
    """A 400 whose details name the header at fault, as a body field's would."""
    return ValidationFailed(**{"Idempotency-Key": [message]})


def idempotency_key_of(sent: str) -> str:
    """The key a header names, bare or as a Structured Field string (with parameters or
    none); refused if it is neither."""
    key = sent.strip()
    if not key:
        raise IdempotencyKeyMissing()
    if len(sent) > IDEMPOTENCY_KEY_MAX_LENGTH:
        raise key_refused(_("Idempotency-Key is at most 255 characters."))
    if not re.fullmatch(IDEMPOTENCY_KEY_PATTERN, sent):
        raise key_refused(_("Idempotency-Key must be printable ASCII characters only."))
    if key.startswith('"'):
        quoted = SF_STRING.fullmatch(key)
        if quoted is None:
            raise key_refused(_("A quoted Idempotency-Key must be a Structured Field string: "
                                "one pair of quotes, a backslash only before \\ or \", then "
                                "parameters only (;name or ;name=value)."))
        key = re.sub(r'\\(.)', r"\1", quoted.group(1)).strip()
    if not key:
        raise IdempotencyKeyMissing()
    return key


def run_command(request, input_serializer, command, *, success_status=200, render=None):
    """`command(ctx, data)` calls one service and returns the answer's body.

    `success_status` is a status, or a function of the validated data that says which.
    `render` adds what must never be stored (a LOCK's lease token, derived again each time).
    """
    key = idempotency_key_of(request.headers.get("Idempotency-Key", ""))
    serializer = input_serializer(data=request.data)
    serializer.is_valid(raise_exception=True)
    if callable(success_status):
        success_status = success_status(serializer.validated_data)

    request_hash = request_fingerprint(request.method, request.path, request.data)
    answer = run_once(
        scope=idempotency_scope_of(request.user), key=key, request_hash=request_hash,
        actor=actor_of(request.user), client_id=client_id_of(request.user),
        command=lambda ctx: command(ctx, serializer.validated_data),
        success_status=success_status,
    )
    if answer.refusal is not None:
        raise answer.refusal
    body = answer.body
    if render is not None and answer.status < 400:
        body = render(body)
    headers = {"Idempotent-Replayed": "true"} if answer.replayed else {}
    return Response(body, status=answer.status, headers=headers)

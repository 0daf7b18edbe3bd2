"""Running a command behind an Idempotency-Key: validate, claim, run once, answer."""

import re

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

from coupons.errors import CouponError, IdempotencyKeyMissing, ValidationFailed
from coupons.models import ServiceClient
from coupons.services import CommandContext
from coupons.services.idempotency import (
    idempotency_claim,
    idempotency_complete,
    request_fingerprint,
)

from .permissions import actor_of, idempotency_scope_of

IDEMPOTENCY_KEY_MAX_LENGTH = 255
# Printable ASCII with at least one visible character: a NUL or control character cannot be
# stored (PostgreSQL refuses NUL in text), and a header value outside ASCII arrives mangled.
IDEMPOTENCY_KEY_PATTERN = r"^[ -~]*[!-~][ -~]*$"

IDEMPOTENCY_KEY_HEADER = OpenApiParameter(
    "Idempotency-Key", location=OpenApiParameter.HEADER, required=True,
    description=(
        "The business key of this command, 1 to 255 printable ASCII characters (a UUID is "
        "typical; surrounding spaces are ignored). Same key + same body answers the stored "
        "result without a second effect (header `Idempotent-Replayed: true`); same key + "
        "another body is refused (422 IDEMPOTENCY_KEY_REUSED); the same key while its first "
        "request still runs answers 409 IDEMPOTENCY_REQUEST_IN_PROGRESS. Keys are scoped to "
        "the caller and kept for IDEMPOTENCY_RETENTION_HOURS (README) after completion. "
        "Missing or blank: 400 IDEMPOTENCY_KEY_MISSING; too long or other characters: 400 "
        "VALIDATION_ERROR."
    ),
    type={"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX_LENGTH,
          "pattern": IDEMPOTENCY_KEY_PATTERN},
)


def client_id_of(user) -> int | None:
    """The service client behind a request, so the leases it takes answer only to it."""
    return user.pk if isinstance(user, ServiceClient) else None


def run_command(request, input_serializer, command, *, success_status=200, render=None):
    """`command(ctx, data)` calls one service and returns the answer's body.

    `success_status` is a status, or a function of the validated data that says which.
    `render` adds what must never be stored (a LOCK's lease token, derived again each time).
    """
    sent = request.headers.get("Idempotency-Key", "")
    key = sent.strip()
    if not key:
        raise IdempotencyKeyMissing()
    if len(sent) > IDEMPOTENCY_KEY_MAX_LENGTH:
        raise ValidationFailed("Idempotency-Key is at most 255 characters.")
    if not re.fullmatch(IDEMPOTENCY_KEY_PATTERN, sent):
        raise ValidationFailed("Idempotency-Key must be printable ASCII characters only.")
    serializer = input_serializer(data=request.data)
    serializer.is_valid(raise_exception=True)
    if callable(success_status):
        success_status = success_status(serializer.validated_data)

    request_hash = request_fingerprint(request.method, request.path, request.data)
    refusal = None
    # One transaction: the claim, the command (a savepoint inside it) and the stored answer
    # commit together; a crash rolls all three back, so the retry runs.
    with transaction.atomic(durable=True):
        claim = idempotency_claim(
            scope=idempotency_scope_of(request.user), key=key, request_hash=request_hash
        )
        if claim.is_replay:
            body, status = claim.replay_body, claim.replay_status
            headers = {"Idempotent-Replayed": "true"}
        else:
            ctx = CommandContext(
                actor=actor_of(request.user), client_id=client_id_of(request.user),
                idempotency_key=key, request_hash=request_hash,
                idempotency_record_id=claim.record_id, success_status=success_status,
            )
            try:
                body, status = command(ctx, serializer.validated_data), success_status
            except CouponError as error:
                # The refusal is the key's answer: a retry with the same key gets the same
                # error, not a second attempt. The command's savepoint rolled back whatever it
                # stored; its rejection row is written and commits with this answer.
                ctx.answered_records.discard(claim.record_id)
                refusal, body, status = error, error.as_body(), error.http_status
            headers = {}
            if claim.record_id not in ctx.answered_records:
                idempotency_complete(ctx, status=status, body=body)
    if refusal is not None:
        raise refusal
    if render is not None and status < 400:
        body = render(body)
    return Response(body, status=status, headers=headers)

"""Running a command behind an Idempotency-Key: validate, claim, run once, answer."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

from coupons.errors import IdempotencyKeyMissing, ValidationFailed
from coupons.models import ServiceClient
from coupons.services.idempotency import request_fingerprint, run_once

from .permissions import actor_of, idempotency_scope_of

IDEMPOTENCY_KEY_HEADER = OpenApiParameter(
    "Idempotency-Key", location=OpenApiParameter.HEADER, required=True,
    description="The business key of this command: same key + same body answers the stored "
                "result without a second effect; same key + another body is refused (422).",
)


def client_id_of(user) -> int | None:
    """The service client behind a request, so the leases it takes answer only to it."""
    return user.pk if isinstance(user, ServiceClient) else None


def run_command(request, input_serializer, command, *, success_status=200, render=None):
    """`command(ctx, data)` calls one service and returns the answer's body.

    `render` adds what must never be stored (a LOCK's lease token, derived again each time).
    """
    key = request.headers.get("Idempotency-Key", "").strip()
    if not key:
        raise IdempotencyKeyMissing()
    if len(key) > 255:
        raise ValidationFailed("Idempotency-Key is at most 255 characters.")
    if not key.isprintable():
        # A NUL or control character cannot be stored (PostgreSQL refuses NUL in text).
        raise ValidationFailed("Idempotency-Key must be printable characters only.")
    serializer = input_serializer(data=request.data)
    serializer.is_valid(raise_exception=True)

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

"""The OpenAPI schema says which capability each operation needs and every error it answers,
both read from the view itself."""

from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

from .error_serializers import ErrorOutput
from .permissions import required_capability
from .serializers import MONEY_PATTERNS, DecimalText

# DRF refuses a NUL in any text field ("Null characters are not allowed."): say so.
NO_NUL = "^[^\\x00]*$"
SLUG = "^[-a-zA-Z0-9_]+$"  # DRF's SlugField

# What each SPEC §6 status means, stated once for every operation that can answer it.
ERROR_MEANINGS = {
    400: "VALIDATION_ERROR: the body, a query parameter or the Idempotency-Key is not valid "
         "(`details` names each field at fault); IDEMPOTENCY_KEY_MISSING for a command without "
         "the header. Nothing was changed.",
    401: "NOT_AUTHENTICATED: no credentials, or a key that is unknown or revoked.",
    403: "PERMISSION_DENIED: the caller lacks the capability (`details.capability` names it), "
         "or the resource answers only to another client or person.",
    404: "NOT_FOUND: no such object (a path id, or an id in the body such as `template_id`), or "
         "a `page` past the last one.",
    409: "A conflict with the current state: INVALID_STATE, ORDER_MISMATCH, TOKEN_MISMATCH or "
         "VERSION_CONFLICT (`details` carry `current_state` and `current_version`), "
         "ALREADY_EXISTS, or IDEMPOTENCY_REQUEST_IN_PROGRESS while the same key still runs.",
    422: "A business rule refused a well-formed request (e.g. COUPON_EXPIRED, THRESHOLD_NOT_MET, "
         "NOT_COUPON_OWNER), or IDEMPOTENCY_KEY_REUSED / MESSAGE_ID_REUSED / REFUND_ID_REUSED: the "
         "key, message id or refund id was used before with another body.",
    429: "THROTTLED: too many requests from this client; `Retry-After` says when to retry.",
}


class CapabilitySchema(AutoSchema):
    """Adds `x-capability`, a line of description and the SPEC §6 error answers.

    It reads the same `required_capability` that `HasCapability` enforces, so the documented
    requirement cannot drift from the checked one. Error answers follow from what the operation
    takes (see `error_statuses`); a view's own `extend_schema(responses=...)` for a status keeps
    its more specific description.
    """

    def capability(self):
        return required_capability(self.view, self.method)

    def get_operation(self, *args, **kwargs):
        # Added to the finished operation: a view's own extend_schema(description=...) replaces
        # get_description, and the requirement must be stated whatever the view wrote.
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        capability = self.capability()
        needs = (f"Needs the `{capability.value}` capability ({capability.label})."
                 if capability else "No caller may do this.")
        operation["description"] = "\n\n".join(
            part for part in (operation.get("description"), needs) if part
        )
        success = min(status for status in operation["responses"] if status.startswith("2"))
        links = getattr(self.view, "response_links", {}).get(self.method)
        if links:
            operation["responses"][success]["links"] = links
        error_ref = self.resolve_serializer(ErrorOutput, "response").ref
        for status in sorted(error_statuses(operation, self.view, self.method)):
            operation["responses"].setdefault(str(status), {
                "description": ERROR_MEANINGS[status],
                "content": {"application/json": {"schema": error_ref}},
            })
        return operation

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if isinstance(field, DecimalText):
            schema["pattern"] = field.pattern
        elif isinstance(field, serializers.SlugField):
            schema["pattern"] = SLUG
        elif (direction == "request" and isinstance(field, serializers.CharField)
              and schema.get("type") == "string"):
            schema.setdefault("pattern", NO_NUL)
        elif (direction == "response" and isinstance(field, serializers.DecimalField)
              and field.decimal_places == 2):
            # Answers write amounts as "12.00": never empty, never negative.
            schema["pattern"] = MONEY_PATTERNS["0"]
        return schema

    def _map_basic_serializer(self, serializer, direction):
        # Rules across fields (one of two, required by kind) that a serializer states as JSON
        # Schema in `schema_constraints`; its validate() enforces the same.
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request":
            schema.update(getattr(serializer, "schema_constraints", {}))
        return schema

    def get_extensions(self):
        capability = self.capability()
        return {**super().get_extensions(),
                "x-capability": capability.value if capability else None}


def error_statuses(operation: dict, view, method: str) -> set[int]:
    """The error statuses an operation can answer, from what it takes.

    Every operation: 401, 403 (capability) and 429 (throttles). A path id or a page: 404. A
    body or query parameters: 400. A command behind an Idempotency-Key: 400, 409 (a key still
    in progress, besides the state conflicts) and 422 (the key reused with another body). A
    view adds what only it answers with `error_statuses = {"POST": {404}}`.
    """
    statuses = {401, 403, 429}
    places = {parameter["in"] for parameter in operation.get("parameters", [])}
    names = {parameter["name"] for parameter in operation.get("parameters", [])}
    if "path" in places or "page" in names:
        statuses.add(404)
    if "requestBody" in operation or "query" in places:
        statuses.add(400)
    if "Idempotency-Key" in names:
        statuses |= {400, 409, 422}
    return statuses | set(getattr(view, "error_statuses", {}).get(method, ()))

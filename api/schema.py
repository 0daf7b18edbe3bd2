"""The OpenAPI schema says which capability each operation needs and every error it answers,
both read from the view itself."""

import copy
import json

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.settings import spectacular_settings
from rest_framework import serializers

from .deprecation import deprecation_of
from .error_serializers import ErrorOutput, ProblemOutput
from .fields import MONEY_PATTERNS, DecimalText, NamedSetField
from .identifiers import ID_PATTERN, ExternalIdField
from .permissions import required_capability
from .problems import PROBLEM_JSON

# DRF refuses a NUL in any text field ("Null characters are not allowed."): say so.
NO_NUL = "^[^\\x00]*$"
# DRF trims text (str.strip) before it checks for blank, so "\t" is blank: a text field that
# may not be blank needs one character that str.strip() keeps. Explicit classes, not \s, which
# ECMAScript reads otherwise than Python.
STRIPPED = ("\\u0009-\\u000d\\u001c-\\u0020\\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029"
            "\\u202f\\u205f\\u3000")
NOT_BLANK = f"^[^\\x00]*[^\\x00{STRIPPED}][^\\x00]*$"
# An optional id may be "" (its default) or an id.
ID_OR_EMPTY = f"^$|{ID_PATTERN}"
SLUG = "^[-a-zA-Z0-9_]+$"  # DRF's SlugField
RETRY_AFTER = {"Retry-After": {
    "description": "Seconds to wait before retrying; the body's `details.retry_after` says the "
                   "same as a number.",
    "required": True,
    "schema": {"type": "integer", "minimum": 0}}}

ALLOW = {"Allow": {
    "description": "The methods this path takes.", "required": True,
    "schema": {"type": "string"}}}


def api_version_header(version: str) -> dict:
    major = version.split(".")[0]
    return {"API-Version": {
        "description": f"The version of this contract the answer follows (docs/api.md, "
                       f"Versions): {version} today; any later {major}.x.y may answer, as the "
                       f"path's major number says.",
        "required": True,
        "schema": {"type": "string", "pattern": f"^{major}\\.[0-9]+\\.[0-9]+$",
                   "example": version}}}


# Sets the version policy lets grow in a minor version (docs/api.md, "Versions"): answers
# declare them open, so a client that validates answers with this schema keeps working when a
# later minor version sends a member it does not know. The component keeps its name and
# members (generated types keep theirs); each answer's field is that enum or the unknown branch.
OPEN_SETS = {
    "ErrorCodeEnum": {
        "type": "string", "pattern": "^[A-Z][A-Z0-9_]*$",
        "description": "A code added in a later minor version: treat it as its HTTP status "
                       "says (docs/api.md, Versions)."},
    "OperationTypeEnum": {
        "type": "string", "pattern": "^[A-Z][A-Z0-9_]*$",
        "description": "A kind of ledger operation added in a later minor version: show it "
                       "as it is named (docs/api.md, Versions)."},
    "TimelineKindEnum": {
        "type": "string", "pattern": "^[a-z][a-z0-9_]*$",
        "description": "A kind of timeline entry added in a later minor version: show its "
                       "`summary` (docs/api.md, Versions)."},
}

# Unions discriminated by a growable set: a branch of its own (the value) takes what a later
# minor version adds, so a validating client keeps working. Its discriminator value is any
# such word but the known ones, so each answer matches one branch; discriminator-aware
# generators type it by its component name, which keeps narrowing on the known values exact.
OPEN_UNIONS = {
    "EventOutcome": ("OtherOutcome", "^[A-Z][A-Z0-9_]*$",
                     "An outcome whose `action` a later minor version adds: the fact was "
                     "received and recorded; read `action` and ignore what you do not know "
                     "(docs/api.md, Versions)."),
}


LINK = {"Link": {
    "description": "RFC 8288 links to the pages beside this one, as `next` and `previous` in "
                   "the body: `<url>; rel=\"next\"`, `<url>; rel=\"prev\"`. Absent on a "
                   "single page.",
    "schema": {"type": "string"}}}

def deprecation_headers(deprecation) -> dict:
    return {
        "Deprecation": {
            "description": "RFC 9745: when this operation was deprecated (a Structured Field "
                           "Date, `@` and seconds since 1970).",
            "required": True, "schema": {"type": "string",
                                         "enum": [deprecation.headers()["Deprecation"]]}},
        "Sunset": {
            "description": "RFC 8594: the date from which this operation is no longer served.",
            "required": True, "schema": {"type": "string",
                                         "enum": [deprecation.headers()["Sunset"]]}},
    }


# Read replicas (docs/deploy.md, Read replicas): a write's answer carries its position, which
# the client sends back on its reads to read its own writes; a read answered from a replica
# says how old its data is. Absent on a server without replicas.
CONSISTENCY_TOKEN = "X-Consistency-Token"
WRITE_POSITION = {CONSISTENCY_TOKEN: {
    "description": "With read replicas: this write's position in the database's log, signed. "
                   "Send it back as the `X-Consistency-Token` request header on your next reads "
                   "(for `DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS`, 60 s by default) and they "
                   "show this write, whichever server answers. Opaque.",
    "schema": {"type": "string"}}}
READ_AFTER_WRITE = {
    "name": CONSISTENCY_TOKEN, "in": "header", "required": False,
    "description": "The `X-Consistency-Token` of your last write's answer: this read then "
                   "shows that write (from a replica that has it, or the primary). A token "
                   "that is expired, altered or another server's is ignored.",
    "schema": {"type": "string"}}
DATA_AS_OF = {"X-Data-As-Of": {
    "description": "Present when a read replica answered: every change acknowledged before "
                   "this time (ISO 8601) is in the answer; a later one may not be yet.",
    "schema": {"type": "string", "format": "date-time"}}}
ABSENT_TYPE = {"type": "string", "nullable": True, "enum": [None]}
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

REPLAYED = {"Idempotent-Replayed": {
    "description": "`true` when this is the stored answer of an earlier request with the same "
                   "Idempotency-Key: nothing happened again. Absent on a first answer.",
    "schema": {"type": "string", "enum": ["true"]}}}

# What each error status means (docs/api.md), stated once for every operation that can
# answer it.
ERROR_MEANINGS = {
    400: "VALIDATION_ERROR: the body, a query parameter, a path id (whitespace or a control "
         "character in it) or the Idempotency-Key is not valid (`details` names each field at "
         "fault); IDEMPOTENCY_KEY_MISSING for a command without the header. Nothing was "
         "changed.",
    401: "NOT_AUTHENTICATED: no credentials, or a key that is unknown or revoked.",
    403: "PERMISSION_DENIED: the caller lacks the capability (`details.capability` names it), "
         "or the resource answers only to another client or person.",
    404: "NOT_FOUND: no such object (a path id, or a reference in the body such as "
         "`template_id` or `return_policy`, named in `details` as sent), or a `page` past the "
         "last one.",
    409: "A conflict with the current state: INVALID_STATE, ORDER_MISMATCH, TOKEN_MISMATCH or "
         "VERSION_CONFLICT (`details` carry `current_state` and `current_version`), "
         "ALREADY_EXISTS, TERMS_CONFLICT (an edit that breaks the terms it keeps), or "
         "IDEMPOTENCY_REQUEST_IN_PROGRESS while the same key still runs.",
    422: "A business rule refused a well-formed request (e.g. COUPON_EXPIRED, THRESHOLD_NOT_MET, "
         "NOT_COUPON_OWNER), or IDEMPOTENCY_KEY_REUSED / MESSAGE_ID_REUSED / REFUND_ID_REUSED: the "
         "key, message id or refund id was used before with another body.",
    405: "METHOD_NOT_ALLOWED: a method this path does not take (OPTIONS included); `Allow` "
         "lists those it takes.",
    406: "NOT_ACCEPTABLE: an `Accept` the API cannot answer (it speaks JSON; "
         "`application/problem+json` is taken for errors).",
    413: "REQUEST_TOO_LARGE: the body is larger than the server takes "
         "(`details.max_bytes`). Nothing was changed.",
    415: "UNSUPPORTED_MEDIA_TYPE: the body is not `application/json`. Nothing was changed.",
    429: "THROTTLED: too many requests from this client; `Retry-After` says when to retry.",
    503: "SERVICE_UNAVAILABLE: the database is not reachable right now; `Retry-After` says when "
         "to retry (a command with the same Idempotency-Key).",
}


class CapabilitySchema(AutoSchema):
    """Adds `x-capability`, a line of description and the error answers (docs/api.md).

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
            operation["responses"][success]["links"] = {
                name: published_link(link) for name, link in links.items()}
        error_ref = self.resolve_serializer(ErrorOutput, "response").ref
        problem_ref = self.resolve_serializer(ProblemOutput, "response").ref
        for status in sorted(error_statuses(operation, self.view, self.method)):
            operation["responses"].setdefault(str(status), {
                "description": ERROR_MEANINGS[status],
                "content": {"application/json": {"schema": error_ref}},
            })
        for status, answer in operation["responses"].items():
            # Every error answer, a view's own too: problem details for whoever asks.
            if int(status) >= 400 and "application/json" in answer.get("content", {}):
                answer["content"][PROBLEM_JSON] = {"schema": problem_ref}
        for status in ("429", "503"):
            operation["responses"][status].setdefault("headers", {}).update(RETRY_AFTER)
        operation["responses"]["405"].setdefault("headers", {}).update(ALLOW)
        headers = api_version_header(spectacular_settings.VERSION)
        deprecation = deprecation_of(self.view, self.method)
        if deprecation is not None:
            operation["deprecated"] = True
            headers |= deprecation_headers(deprecation)
            operation["description"] += (
                f"\n\nDeprecated since {deprecation.deprecated_on}; no longer served from "
                f"{deprecation.sunset_on}. {deprecation.successor}").rstrip()
        for answer in operation["responses"].values():
            answer.setdefault("headers", {}).update(headers)
        if any(p["name"] == "cursor" for p in operation.get("parameters", [])):
            operation["responses"][success].setdefault("headers", {}).update(LINK)
        if any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", [])):
            operation["responses"][success].setdefault("headers", {}).update(REPLAYED)
        if self.method in WRITE_METHODS:
            for answer in operation["responses"].values():
                answer["headers"].update(WRITE_POSITION)
        elif self.method == "GET":
            operation.setdefault("parameters", []).append(READ_AFTER_WRITE)
            operation["responses"][success]["headers"].update(DATA_AS_OF)
        return operation

    def get_summary(self):
        # The first sentence of the view's docstring: redocly (and generated clients) want a
        # one-line summary, the description keeps the whole text.
        summary = super().get_summary()
        if summary:
            return summary
        first = (self.get_description() or "").split("\n\n")[0].replace("\n", " ")
        return first.split(". ")[0].rstrip(".:") or None

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        if isinstance(field, NamedSetField):
            return {"allOf": [{"$ref": f"#/components/schemas/{field.component}"}],
                    "description": field.help_text}
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if isinstance(field, DecimalText):
            schema["pattern"] = field.pattern
        elif isinstance(field, serializers.SlugField):
            schema["pattern"] = SLUG
        elif isinstance(field, ExternalIdField):
            schema["pattern"] = ID_OR_EMPTY if field.allow_blank else ID_PATTERN
            if not field.allow_blank:
                schema["minLength"] = 1
        elif (direction == "request" and isinstance(field, serializers.CharField)
              and schema.get("type") == "string"):
            schema["pattern"] = NO_NUL if field.allow_blank else NOT_BLANK
        elif (direction == "response" and isinstance(field, serializers.DecimalField)
              and field.decimal_places == 2):
            # Answers write amounts as "12.00": never empty, never negative.
            schema["pattern"] = MONEY_PATTERNS["0"]
        schema.update(getattr(field, "schema_extra", {}))
        return schema

    def _insert_field_validators(self, field, schema):
        super()._insert_field_validators(field, schema)
        if "oneOf" in schema and schema["oneOf"][1:] == [{"type": "string", "maxLength": 0}]:
            # drf-spectacular's "or empty" for a blank-able string with a pattern puts the
            # default ("") in a branch that refuses it: one schema instead, whose pattern
            # (set in _map_serializer_field) allows "" where the field does.
            schema.update(schema.pop("oneOf")[0])

    def _map_basic_serializer(self, serializer, direction):
        # Rules across fields (one of two, required by kind) that a serializer states as JSON
        # Schema in `schema_constraints`; its validate() enforces the same.
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request":
            # A copy: the postprocessing hooks edit the schema in place, never the class's.
            schema.update(copy.deepcopy(getattr(serializer, "schema_constraints", {})))
        elif isinstance(serializer, serializers.ModelSerializer):
            # A model row's answer sends every field it names (null where the column is),
            # whatever defaults make a field optional on input; `sometimes_absent` names what a
            # serializer leaves out for some readers.
            absent = set(getattr(serializer, "sometimes_absent", ()))
            schema["required"] = sorted(set(schema["properties"]) - absent)
        return schema

    def get_extensions(self):
        capability = self.capability()
        return {**super().get_extensions(),
                "x-capability": capability.value if capability else None}


def published_link(link: dict) -> dict:
    """A link's request body fields, in words and as `x-request-body`: OpenAPI allows any value
    as a link's `requestBody`, but openapi-generator's validator (default settings) refuses all
    but a string, and no string names several fields. tests/contract/schemathesis_hooks.py puts
    it back for the fuzzer's stateful phase."""
    body = link.get("requestBody")
    if body is None:
        return link
    fields = ", ".join(f"`{field}` from `{value}`" for field, value in body.items())
    published = {key: value for key, value in link.items() if key != "requestBody"}
    return {**published, "description": f"Request body: {fields}.", "x-request-body": body}


def error_statuses(operation: dict, view, method: str) -> set[int]:
    """The error statuses an operation can answer, from what it takes.

    Every operation: 401, 403 (capability), 405 (another method on its path), 406 (an Accept
    it cannot answer), 429 (throttles) and 503 (no database). A path id or a page: 404. A body,
    query parameters or a path id: 400. A body: 413 (too large) and 415 (not JSON). A
    command behind an Idempotency-Key: 400, 409 (a key still in progress, besides the state
    conflicts) and 422 (the key reused with another body). A view adds what only it answers with
    `error_statuses = {"POST": {404}}`.
    """
    statuses = {401, 403, 405, 406, 429, 503}
    places = {parameter["in"] for parameter in operation.get("parameters", [])}
    names = {parameter["name"] for parameter in operation.get("parameters", [])}
    if "path" in places or "page" in names:
        statuses.add(404)
    if "path" in places:  # api.converters.MalformedId
        statuses.add(400)
    if "requestBody" in operation or "query" in places:
        statuses.add(400)
    if "requestBody" in operation:
        statuses |= {413, 415}
    if "Idempotency-Key" in names:
        statuses |= {400, 409, 422}
    return statuses | set(getattr(view, "error_statuses", {}).get(method, ()))


def open_set_fields(node, ref: str, unknown: dict) -> None:
    """Every field of an answer's `node` (nested objects too) typed by `ref` becomes
    `ref` or `unknown`."""
    if isinstance(node, list):
        for item in node:
            open_set_fields(item, ref, unknown)
        return
    if not isinstance(node, dict):
        return
    for name, spec in node.get("properties", {}).items():
        if spec.get("$ref") == ref or spec.get("allOf") == [{"$ref": ref}]:
            described = {key: value for key, value in spec.items() if key not in ("$ref", "allOf")}
            node["properties"][name] = {"anyOf": [{"$ref": ref}, dict(unknown)], **described}
    for key, value in node.items():
        if key != "properties":
            open_set_fields(value, ref, unknown)
    for spec in node.get("properties", {}).values():
        open_set_fields(spec, ref, unknown)


def open_union(schemas: dict, name: str, other: str, pattern: str, description: str) -> None:
    """Adds to the union `name` the branch `other`: an object whose discriminator is any value
    matching `pattern` but those the union maps, its other fields unknown."""
    union = schemas[name]
    field = union["discriminator"]["propertyName"]
    known = sorted(union["discriminator"]["mapping"])
    schemas[other] = {
        "type": "object", "description": description,
        "properties": {field: {"type": "string", "pattern": pattern, "not": {"enum": known}}},
        "required": [field],
    }
    union["oneOf"].append({"$ref": f"#/components/schemas/{other}"})
    union["x-extensible-enum"] = True


def tidy_schema(result, generator, request, public):
    """Postprocessing hook (SPECTACULAR_SETTINGS): what redocly's recommended rules and the
    generated client need and the generator does not write.

    - A nullable reference or union (`allOf`/`oneOf` beside `nullable`) becomes a `oneOf` of
      its branches and a branch of its own that is only null: OpenAPI 3.0's `nullable` does
      not reach into a `$ref`, so a strict validator refuses null otherwise.
    - A request body with required fields, or a union, is itself required: a client that
      may leave it out sends a request the server can only refuse.
    - A property that must be left out (`not: {}`, a `oneOf` branch excluding it) gets a
      null-only type beside it: JSON Schema already refuses any value, and generated types then
      refuse the field in that branch (`string & null` is `never`), which `not` cannot tell
      them. Added here, after the enum hook, which would make the null a component. An
      enum's branch is an `allOf` of its reference, so generators keep the component's name.
    - What a branch of a request's constraints (`allOf` of `oneOf`/`anyOf`) requires is
      stated as `not: {not: {required}}`, the same to a validator: openapi-generator (default
      settings) copies every branch's `required` into the model, so a client had to send
      both lease shapes, or a note where APPLY needs none.
    - A request field the server fills in when it is left out states that in its description,
      not as `default`: generators read `default` on a request field as "always there" and
      make it required in the client's types (openapi-typescript with its default settings),
      so a client had to send what it may leave out.
    """
    schemas = result.get("components", {}).get("schemas", {})

    def is_null_enum(branch):
        target = schemas.get(branch["$ref"].rsplit("/", 1)[1], {}) if "$ref" in branch else branch
        return target.get("enum") == [None]

    def branch_type(branch):
        target = schemas.get(branch["$ref"].rsplit("/", 1)[1], {}) if "$ref" in branch else branch
        if target.get("enum") == [None]:
            return None  # drf-spectacular's NullEnum: the null the `nullable` already allows
        return target.get("type", "object" if "properties" in target else None)

    def kept_by_name(branch):
        """An enum's reference, wrapped: openapi-generator (typescript-fetch, default settings)
        copies a bare one into the model as `<Model><Field>Enum`, which is exported twice where
        the component has that name (RefundCouponDecisionOutput.action) and fails `tsc`."""
        target = schemas.get(branch.get("$ref", "").rsplit("/", 1)[-1], {})
        return {"allOf": [branch]} if "enum" in target else branch

    def walk(node):
        if isinstance(node, dict):
            for name, spec in node.get("properties", {}).items():
                if spec == {"not": {}}:
                    node["properties"][name] = {**ABSENT_TYPE, "not": {}}
            if node.get("nullable") and ("allOf" in node or "oneOf" in node):
                # A strict reader applies a wrapped $ref to null too, and the referenced
                # schema refuses it: the null becomes a branch of its own.
                del node["nullable"]
                branches = [branch for branch in node.pop("allOf", []) + node.pop("oneOf", [])
                            if not is_null_enum(branch)]
                types = {branch_type(branch) for branch in branches} - {None}
                null_type = types.pop() if len(types) == 1 else "string"
                node["oneOf"] = [*map(kept_by_name, branches),
                                 {"type": null_type, "enum": [None], "nullable": True}]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(result)
    for name, unknown in OPEN_SETS.items():
        if name not in schemas:  # a schema of some views only (tests) may not name the set
            continue
        schemas[name]["x-extensible-enum"] = True
        schemas[name]["description"] = "\n\n".join(part for part in (
            schemas[name].get("description"),
            "Extensible: a later minor version may add members; answers declare the field "
            "as this enum or any other such value (`x-extensible-enum`).") if part)
        for component_name, component in schemas.items():
            if not component_name.endswith("Request"):
                open_set_fields(component, f"#/components/schemas/{name}", unknown)
    for name, (other, pattern, description) in OPEN_UNIONS.items():
        if name in schemas:
            open_union(schemas, name, other, pattern, description)
    for name, component in schemas.items():
        if name.endswith("Request"):
            for part in component.get("allOf", []):
                for branch in part.get("oneOf", []) + part.get("anyOf", []):
                    if "required" in branch:
                        branch["not"] = {"not": {"required": branch.pop("required")}}
    for name, component in schemas.items():
        if name.endswith("Request"):  # COMPONENT_SPLIT_REQUEST: a request's own component
            for spec in component.get("properties", {}).values():
                if "default" in spec:
                    left_out = f"Left out, the server takes `{json.dumps(spec.pop('default'))}`."
                    spec["description"] = "\n\n".join(
                        part for part in (spec.get("description"), left_out) if part)
    for item in result["paths"].values():
        for operation in item.values():
            body = operation.get("requestBody")
            if not body:
                continue
            ref = body["content"]["application/json"]["schema"].get("$ref", "")
            target = schemas.get(ref.rsplit("/", 1)[1], {}) if ref else {}
            if target.get("required") or "oneOf" in target:
                body["required"] = True
    return result

"""Schemathesis hooks for tests/contract/test_schemathesis.py (SCHEMATHESIS_HOOKS)."""

import uuid

import schemathesis


@schemathesis.hook
def before_call(context, case, kwargs):
    """A schema-valid command gets a fresh Idempotency-Key.

    Generated keys repeat ("0", "00"...), so most commands would only meet
    IDEMPOTENCY_KEY_REUSED (422) and never reach the coupon; invalid keys stay as generated.
    A schema-valid list request with a `cursor` starts at the first page (`cursor=`): a
    cursor is a string only the server signs, so a generated one is a tampered cursor
    (400 INVALID_CURSOR, tests/api/test_cursor_pages.py), not valid data.
    """
    meta = case.meta
    positive = meta and meta.generation.mode.is_positive
    if positive and "Idempotency-Key" in (case.headers or {}):
        case.headers["Idempotency-Key"] = str(uuid.uuid4())
    if positive and "cursor" in (case.query or {}):
        case.query["cursor"] = ""


@schemathesis.hook
def before_load_schema(context, raw_schema):
    """A link's request body is published as `x-request-body` (api.schema.published_link):
    the stateful phase reads it from `requestBody`, runtime expressions inside an object."""
    for item in raw_schema.get("paths", {}).values():
        for operation in item.values():
            for answer in (operation.get("responses", {}) if isinstance(operation, dict)
                           else {}).values():
                for link in answer.get("links", {}).values():
                    if "x-request-body" in link:
                        link["requestBody"] = link["x-request-body"]

"""Schemathesis hooks for tests/contract/test_schemathesis.py (SCHEMATHESIS_HOOKS)."""

import uuid

import schemathesis


@schemathesis.hook
def before_call(context, case, kwargs):
    """A schema-valid command gets a fresh Idempotency-Key.

    Generated keys repeat ("0", "00"...), so most commands would only meet
    IDEMPOTENCY_KEY_REUSED (422) and never reach the coupon; invalid keys stay as generated.
    """
    meta = case.meta
    if meta and meta.generation.mode.is_positive and "Idempotency-Key" in (case.headers or {}):
        case.headers["Idempotency-Key"] = str(uuid.uuid4())

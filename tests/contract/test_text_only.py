"""Text is text: every string field a request takes refuses a number (or a flag, a list)
with a 400 naming it, as the schema's `type: string` says, instead of storing `"0"`."""

import pytest
from drf_spectacular.generators import EndpointEnumerator, SchemaGenerator
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from tests.refunds.compensations.conftest import staff

pytestmark = pytest.mark.django_db
NOT_TEXT = [0, 42, 1.5, True, ["a"], {"a": "b"}]


def request_serializers():
    generator = SchemaGenerator()
    for path, _pattern, method, callback in EndpointEnumerator().get_api_endpoints():
        if method not in ("POST", "PUT", "PATCH"):
            continue
        serializer = generator.create_view(callback, method).schema.get_request_serializer()
        if isinstance(serializer, type):
            serializer = serializer()
        if isinstance(serializer, PolymorphicProxySerializer):
            for member in serializer.serializers.values():
                yield f"{method} {path}", member() if isinstance(member, type) else member
        elif isinstance(serializer, serializers.BaseSerializer):
            yield f"{method} {path}", serializer


def text_fields(serializer, prefix=""):
    for name, field in serializer.fields.items():
        if field.read_only:
            continue
        field = getattr(field, "child", field)  # a list's items
        if isinstance(field, serializers.BaseSerializer):
            yield from text_fields(field, f"{prefix}{name}.")
        elif isinstance(field, serializers.CharField):
            yield f"{prefix}{name}", field


def every_text_field():
    seen = set()
    for operation, serializer in request_serializers():
        for name, field in text_fields(serializer):
            key = (type(serializer), name)
            if key not in seen:
                seen.add(key)
                yield pytest.param(field, id=f"{operation} {type(serializer).__name__}.{name}")


def test_the_requests_have_text_fields_to_check():
    assert len(list(every_text_field())) > 30


@pytest.mark.parametrize("field", list(every_text_field()))
@pytest.mark.parametrize("value", NOT_TEXT, ids=repr)
def test_every_text_field_of_a_request_refuses_what_is_not_text(field, value):
    with pytest.raises(serializers.ValidationError):
        field.run_validation(value)


# --- what a caller sees, endpoint family by endpoint family --------------------------------


@pytest.fixture
def operator(db):
    return staff("olga", "operator")


@pytest.fixture
def policy_admin(db):
    return staff("pat", "policy_admin")


def refused(response, field):
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in error["details"], error
    return error


def test_a_number_as_a_facts_id_is_refused(api, clock):
    response = api.post("/api/v1/events", {
        "message_id": "m-text", "type": "OrderClosed", "occurred_at": clock.now().isoformat(),
        "payload": {"order_id": 0}}, format="json")

    error = refused(response, "payload")
    assert "order_id" in error["details"]["payload"]


def test_a_number_as_a_refunds_ids_is_refused(api):
    body = {"refund_id": 1, "order_id": 2, "payment_id": 3, "refund_amount": "1.00",
            "refund_type": "FULL"}

    error = refused(api.post("/api/v1/refunds", body, format="json",
                             HTTP_IDEMPOTENCY_KEY="k-text"), "refund_id")
    assert {"order_id", "payment_id"} <= set(error["details"])


@pytest.mark.parametrize("action", ["approve", "reject"])
def test_a_number_as_a_decisions_note_is_refused(operator, action):
    response = operator.post(f"/api/v1/refunds/1/{action}", {"seen_entry": "a" * 64, "note": 0},
                        format="json", HTTP_IDEMPOTENCY_KEY="k-text")

    refused(response, "note")


def test_a_number_as_a_journal_tip_is_refused(operator):
    # 64 digits are 64 hex characters once DRF has made them text.
    response = operator.post("/api/v1/refunds/1/approve", {"seen_entry": 10**63},
                        format="json", HTTP_IDEMPOTENCY_KEY="k-text")

    refused(response, "seen_entry")


def test_a_number_as_a_compensations_reason_or_note_is_refused(api, coupon, operator):
    operation = coupon.operations.get()
    propose = operator.post(
        f"/api/v1/coupons/{coupon.pk}/operations/{operation.pk}/compensate", {"reason": 0},
        format="json", HTTP_IDEMPOTENCY_KEY="k-text")
    decide = operator.post("/api/v1/compensations/1/reject",
                           {"seen_entry": "a" * 64, "note": 7}, format="json",
                           HTTP_IDEMPOTENCY_KEY="k-text-2")

    refused(propose, "reason")
    refused(decide, "note")


def test_a_number_as_a_return_policys_code_or_name_is_refused(policy_admin):
    response = policy_admin.post("/api/v1/return-policies", {"code": 42, "name": 7},
                                 format="json", HTTP_IDEMPOTENCY_KEY="k-text")

    error = refused(response, "code")
    assert "name" in error["details"]


def test_a_number_as_a_findings_note_is_refused(operator):
    response = operator.post("/api/v1/reconciliation/1/resolve",
                             {"action": "DISMISS", "note": 0}, format="json",
                             HTTP_IDEMPOTENCY_KEY="k-text")

    refused(response, "note")

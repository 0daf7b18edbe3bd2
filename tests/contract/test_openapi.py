"""The OpenAPI schema states what the server does: its errors, the fact payloads, the limits."""

import re

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator

from coupons.models import FactType

pytestmark = pytest.mark.django_db

ERROR_REF = "#/components/schemas/ErrorOutput"


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema):
    for route, item in schema["paths"].items():
        for method, operation in item.items():
            yield method.upper(), route, operation


def test_every_operation_says_what_it_does_and_documents_its_errors(schema):
    for method, route, operation in operations(schema):
        said = operation["description"].split("\n\nNeeds the")[0]
        assert not said.startswith("Needs the"), (method, route)
        responses = operation["responses"]
        assert {"401", "403", "429"} <= set(responses), (method, route)
        for status, response in responses.items():
            if status.startswith("4"):
                body = response["content"]["application/json"]["schema"]
                assert body == {"$ref": ERROR_REF}, (method, route, status)


def test_commands_document_key_conflicts_and_reuse(schema):
    lock = schema["paths"]["/api/v1/coupons/{coupon_id}/lock"]["post"]
    key = next(p for p in lock["parameters"] if p["name"] == "Idempotency-Key")

    assert {"400", "404", "409", "422"} <= set(lock["responses"])
    assert key["required"] and key["schema"]["maxLength"] == 255
    assert "255" in key["description"]


def test_events_body_is_a_union_discriminated_by_type(schema):
    body = schema["paths"]["/api/v1/events"]["post"]["requestBody"]
    union = schema["components"]["schemas"][
        body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]]
    deposit = schema["components"]["schemas"]["DepositPaidEventRequest"]
    payload = schema["components"]["schemas"][
        deposit["properties"]["payload"]["$ref"].rsplit("/", 1)[1]]

    assert union["discriminator"]["propertyName"] == "type"
    assert set(union["discriminator"]["mapping"]) == set(FactType.values)
    assert {"coupon_id", "order_amount", "final_payment_deadline"} <= set(payload["required"])


@pytest.mark.parametrize(("amount", "valid"), [
    ("12.00", True), ("0.01", True), ("9999999999.99", True), ("", False), ("-1.00", False),
    ("0.00", False), ("0", False), ("1e3", False), ("012", False), ("1.234", False)])
def test_money_patterns_refuse_empty_negative_and_zero(schema, amount, valid):
    lock = schema["components"]["schemas"]["LockInputRequest"]
    pattern = lock["properties"]["order_amount"]["pattern"]

    assert bool(re.fullmatch(pattern, amount)) is valid


def allows(schema, component: str, body: dict) -> bool:
    """A request body against its component, as a JSON Schema validator reads it."""
    document = {"$ref": f"#/components/schemas/{component}", "components": schema["components"]}
    return jsonschema.Draft4Validator(document).is_valid(body)


def test_cross_field_rules_are_in_the_schema(schema):
    order = {"order_id": "o-1", "user_id": "u-1", "order_amount": "300.00"}
    lease = {"order_id": "o-1", "lock_token": "t", "expected_version": 2}
    until = "2030-01-01T00:00:00Z"
    template = {"code": "off5", "name": "5 off", "kind": "AMOUNT_OFF", "face_value": "5.00"}

    for component, body in (("LockInputRequest", order), ("RenewInputRequest", lease)):
        assert allows(schema, component, body)
        assert allows(schema, component, {**body, "lease_seconds": 900})
        assert allows(schema, component, {**body, "lease_until": until})
        assert not allows(schema, component, {**body, "lease_seconds": 900, "lease_until": until})
    assert allows(schema, "TemplateInputRequest", {**template, "valid_days": 30})
    assert not allows(schema, "TemplateInputRequest", template)  # valid_until xor valid_days
    assert not allows(schema, "TemplateInputRequest",
                      {**template, "valid_days": 30, "valid_until": until})
    assert not allows(schema, "TemplateInputRequest", {**template, "valid_days": 30,
                                                       "face_value": None})


def test_a_constraint_branchs_required_fields_are_not_copied_into_generated_models(schema):
    """openapi-generator copies a `required` it finds in any branch of a request's `allOf`
    into the model (tests/contract/test_typescript_fetch_client.py): the branches state it
    as `not: {not: {required}}`."""
    for name, component in schema["components"]["schemas"].items():
        if name.endswith("Request"):
            for part in component.get("allOf", []):
                for branch in part.get("oneOf", []) + part.get("anyOf", []):
                    assert "required" not in branch, name


def test_id_filters_and_pages_are_bounded_integers(schema):
    listing = {p["name"]: p["schema"] for p in
               schema["paths"]["/api/v1/refunds"]["get"]["parameters"]}

    assert listing["coupon_id"] == {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}
    assert listing["page_size"] == {"type": "integer", "minimum": 1, "maximum": 200}
    assert listing["order_id"]["maxLength"] == 64


@pytest.mark.parametrize("page_size", ["0", "201", "abc", "-1", "1.5"])
def test_a_page_size_out_of_bounds_is_a_400(api, page_size):
    response = api.get("/api/v1/coupons", {"page_size": page_size})

    assert response.status_code == 400
    assert response.json()["error"]["details"] == {
        "page_size": ["A whole number from 1 to 200."]}


@pytest.mark.parametrize("amount", ["", "-5.00", "1e2", " 5", 300])
def test_money_outside_the_pattern_is_refused(api, amount):
    response = api.post("/api/v1/refunds", {
        "refund_id": "r-1", "order_id": "o-1", "payment_id": "p-1", "refund_amount": amount,
        "refund_type": "FULL"}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert response.status_code == 400
    assert "refund_amount" in response.json()["error"]["details"]


def test_an_idempotency_key_outside_ascii_is_refused(api):
    response = api.post("/api/v1/coupons", {"template_id": 1, "user_id": "u1"}, format="json",
                        HTTP_IDEMPOTENCY_KEY="clé-1")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_an_id_in_the_body_documents_its_404(schema):
    issue = schema["paths"]["/api/v1/coupons"]["post"]["responses"]
    refund = schema["paths"]["/api/v1/refunds"]["post"]["responses"]

    assert "404" in issue  # template_id
    assert "404" not in refund  # nothing in it is looked up by id


def test_a_lock_links_to_the_commands_its_lease_allows(schema):
    links = schema["paths"]["/api/v1/coupons/{coupon_id}/lock"]["post"]["responses"]["200"][
        "links"]
    operation_ids = {op["operationId"] for _, _, op in operations(schema)}

    assert {link["operationId"] for link in links.values()} <= operation_ids
    assert links["RedeemCoupon"]["x-request-body"]["lock_token"] == "$response.body#/lock_token"
    assert "`lock_token` from `$response.body#/lock_token`" in links["RedeemCoupon"]["description"]
    # openapi-generator's validator refuses a link's requestBody that is not a string.
    assert not any("requestBody" in link for link in links.values())


def test_the_fuzzers_stateful_phase_follows_a_links_request_body(schema):
    from tests.contract.schemathesis_hooks import before_load_schema

    before_load_schema(None, schema)

    link = schema["paths"]["/api/v1/templates"]["post"]["responses"]["201"]["links"][
        "IssueCoupon"]
    assert link["requestBody"] == {"template_id": "$response.body#/id"}


def test_text_fields_state_what_the_server_refuses(schema):
    template = schema["components"]["schemas"]["TemplateInputRequest"]["properties"]
    note = schema["components"]["schemas"]["RejectInputRequest"]["properties"]["note"]

    assert not re.fullmatch(note["pattern"], "a\x00b") and re.fullmatch(note["pattern"], "ok")
    assert not re.fullmatch(template["code"]["pattern"], "café")


@pytest.mark.parametrize("component", ["FindingResolveInputRequest", "CaseResolveInputRequest"])
def test_a_dismissal_without_a_note_is_outside_the_schema(schema, component):
    assert allows(schema, component, {"action": "APPLY"})
    assert allows(schema, component, {"action": "DISMISS", "note": "paid twice"})
    assert not allows(schema, component, {"action": "DISMISS"})
    assert not allows(schema, component, {"action": "DISMISS", "note": "  "})

"""The schema and the server agree both ways on what a contract check once found: each
body here is refused by the server and outside the schema, or allowed by both."""

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from api.error_serializers import ERROR_CODES
from coupons.events.handlers import OUTCOME_ACTIONS
from refunds.models import ReturnPolicy, ReturnPolicyVersion
from tests.refunds.compensations.conftest import staff

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def allows(schema, component: str, body) -> bool:
    """Whether the component's JSON Schema takes `body` (JSON round trip: the YAML's types)."""
    document = json.loads(json.dumps({"$ref": f"#/components/schemas/{component}",
                                      "components": schema["components"]}))
    return jsonschema.Draft4Validator(document).is_valid(body)


def walk(node, path=""):
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, f"{path}/{index}")


@pytest.fixture
def policy_admin(db):
    return staff("pat", "policy_admin")


@pytest.mark.parametrize("reason", ["\t", "   ", "\u00a0", "\n\u3000"])
def test_a_whitespace_only_reason_is_refused_by_both(schema, api, coupon, reason):
    response = api.post(f"/api/v1/coupons/{coupon.pk}/void",
                        {"expected_version": 1, "reason": reason}, format="json",
                        HTTP_IDEMPOTENCY_KEY="k-void")

    assert response.status_code == 400
    assert "reason" in response.json()["error"]["details"]
    assert not allows(schema, "VoidInputRequest", {"expected_version": 1, "reason": reason})
    assert allows(schema, "VoidInputRequest", {"expected_version": 1, "reason": " ok "})


def test_an_empty_rules_list_is_refused_by_both(schema, policy_admin):
    body = {"code": "empty", "name": "Empty", "rules": []}

    response = policy_admin.post("/api/v1/return-policies", body, format="json",
                                 HTTP_IDEMPOTENCY_KEY="k-empty")

    assert response.status_code == 400
    assert not ReturnPolicy.objects.filter(code="empty").exists()
    assert not allows(schema, "PolicyCreateInputRequest", body)


def test_a_draft_patch_without_rules_is_refused_by_both(schema, policy_admin):
    created = policy_admin.post("/api/v1/return-policies", {"code": "p", "name": "P"},
                                format="json", HTTP_IDEMPOTENCY_KEY="k-p").json()
    rules_before = ReturnPolicyVersion.objects.get(policy_id=created["id"], number=1).rules

    response = policy_admin.patch(f"/api/v1/return-policies/{created['id']}/versions/1", {},
                                  format="json", HTTP_IDEMPOTENCY_KEY="k-patch")

    assert response.status_code == 400
    assert ReturnPolicyVersion.objects.get(policy_id=created["id"], number=1).rules == rules_before
    patch = schema["paths"]["/api/v1/return-policies/{policy_id}/versions/{number}"]["patch"]
    body = patch["requestBody"]
    assert body["required"]
    assert body["content"]["application/json"]["schema"]["$ref"].endswith(
        "/DraftUpdateInputRequest")
    assert not allows(schema, "DraftUpdateInputRequest", {})


@pytest.mark.parametrize("edit", [
    {"valid_until": "2030-01-01T00:00:00Z", "valid_days": 10},
    {"kind": "AMOUNT_OFF", "face_value": None},
    {"kind": "PERCENT_OFF", "percent_off": None},
])
def test_a_template_edit_that_breaks_a_rule_whatever_is_stored_is_refused_by_both(
        schema, template, api, edit):
    response = api.patch(f"/api/v1/templates/{template.pk}", edit, format="json",
                         HTTP_IDEMPOTENCY_KEY="k-edit")

    assert response.status_code == 400, response.json()
    assert not allows(schema, "PatchedTemplateEditInputRequest", edit)
    assert allows(schema, "PatchedTemplateEditInputRequest", {"valid_days": 10})


def test_no_field_has_a_default_its_own_schema_refuses(schema):
    for path, node in walk(schema):
        assert not any(branch == {"type": "string", "maxLength": 0}
                       for branch in node.get("oneOf", [])), path
        if "default" in node and "pattern" in node:
            assert re.fullmatch(node["pattern"], node["default"]), path


def test_nullable_always_has_a_type_and_every_operation_a_summary(schema):
    for path, node in walk(schema):
        if node.get("nullable"):
            assert "type" in node, path
    for route, item in schema["paths"].items():
        for method, operation in item.items():
            assert operation.get("summary"), (method, route)


def test_the_events_body_is_required_and_the_outcome_typed(schema):
    events = schema["paths"]["/api/v1/events"]["post"]
    outcome = schema["components"]["schemas"]["EventOutput"]["properties"]["outcome"]

    assert events["requestBody"]["required"] is True
    assert outcome == {"$ref": "#/components/schemas/EventOutcome"}
    assert schema["components"]["schemas"]["EventOutcome"]["discriminator"]["propertyName"] == (
        "action")


def test_every_outcome_action_the_handlers_write_is_in_the_enum():
    written = set()
    for source in (ROOT / "coupons" / "events").glob("*.py"):
        written |= set(re.findall(r'"action": "([A-Z_]+)"', source.read_text()))
    written |= set(re.findall(r'_outcome\("([A-Z_]+)"', (ROOT / "coupons" / "events" /
                                                         "presale.py").read_text()))

    assert written and written <= set(OUTCOME_ACTIONS)


def test_an_answered_outcome_matches_its_schema(schema, send, coupon):
    answer = send("OrderClosed", order_id="no-such-order")

    assert answer["outcome"]["action"] == "NO_COUPON"
    assert allows(schema, "EventOutput", answer)


def test_retry_after_and_idempotent_replayed_are_declared(schema, api, coupon):
    lock = schema["paths"]["/api/v1/coupons/{coupon_id}/lock"]["post"]["responses"]

    assert lock["200"]["headers"]["Idempotent-Replayed"]["schema"]["enum"] == ["true"]
    for route, item in schema["paths"].items():
        for method, operation in item.items():
            for status in ("429", "503"):
                header = operation["responses"][status]["headers"]["Retry-After"]
                assert header["required"] is True, (method, route, status)
                assert header["schema"]["type"] == "integer"
    body = {"order_id": "o-1", "user_id": "u1", "order_amount": "300.00"}
    first = api.post(f"/api/v1/coupons/{coupon.pk}/lock", body, format="json",
                     HTTP_IDEMPOTENCY_KEY="k-lock")
    again = api.post(f"/api/v1/coupons/{coupon.pk}/lock", body, format="json",
                     HTTP_IDEMPOTENCY_KEY="k-lock")
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"


def test_the_token_prefix_is_in_the_security_scheme(schema):
    scheme = schema["components"]["securitySchemes"]["ServiceToken"]

    assert (scheme["in"], scheme["name"], scheme["x-token-prefix"]) == (
        "header", "Authorization", "Token")


def test_every_error_code_is_in_the_schema_enum_and_documented_once(schema):
    enum = schema["components"]["schemas"]["ErrorCodeEnum"]["enum"]
    errors = (ROOT / "docs" / "api.md").read_text()
    errors = errors.split("## Errors", 1)[1].split("\n## ", 1)[0]
    # One heading per code (its problem details' `type` anchor, api/problems.py).
    table = re.findall(r"^#### `([A-Z][A-Z_]+)`$", errors, flags=re.MULTILINE)

    assert sorted(table) == sorted(set(table)), "a code documented twice"
    assert set(table) == set(enum) == set(ERROR_CODES)
    assert {"COUPON_NOT_YET_VALID", "REPLAY_IN_PROGRESS", "INTERNAL_ERROR",
            "UNSUPPORTED_MEDIA_TYPE", "METHOD_NOT_ALLOWED"} <= set(enum)


def test_a_body_that_is_not_json_is_a_declared_415(schema, api, coupon):
    lock = schema["paths"]["/api/v1/coupons/{coupon_id}/lock"]["post"]["responses"]
    answer = api.generic("POST", f"/api/v1/coupons/{coupon.pk}/lock", "order_id=o-1",
                         content_type="text/plain", HTTP_IDEMPOTENCY_KEY="k-415")

    assert answer.status_code == 415
    assert answer.json()["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert "415" in lock
    assert all("415" in operation["responses"]
               for item in schema["paths"].values() for operation in item.values()
               if "requestBody" in operation)


def test_every_answer_names_the_version_the_schema_declares(schema, api, coupon):
    version = schema["info"]["version"]
    answers = [api.get(f"/api/v1/coupons/{coupon.pk}"), api.get("/api/v1/coupons/0"),
               api.get("/api/v1/no-such-route"), APIClient().get("/api/v1/coupons")]

    assert [answer["API-Version"] for answer in answers] == [version] * 4
    for route, item in schema["paths"].items():
        for method, operation in item.items():
            for status, answer in operation["responses"].items():
                declared = answer["headers"]["API-Version"]["schema"]
                assert re.fullmatch(declared["pattern"], version), (method, route, status)
                assert declared["example"] == version


def strict_openapi30(node):
    """JSON Schema as a strict OpenAPI 3.0 reader builds it: `nullable` widens only the `type`
    beside it, never a `$ref` or `allOf` it wraps."""
    if isinstance(node, list):
        return [strict_openapi30(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: strict_openapi30(value) for key, value in node.items()}
    if node.pop("nullable", False) and "type" in node:
        node["type"] = [node["type"], "null"]
    return node


def strictly_allows(schema, component, body) -> bool:
    document = strict_openapi30(json.loads(json.dumps(
        {"$ref": f"#/components/schemas/{component}", "components": schema["components"]})))
    return jsonschema.Draft4Validator(document).is_valid(body)


def test_a_null_reference_passes_a_strict_reader(schema, api, coupon):
    proof = api.get(f"/api/v1/coupons/{coupon.pk}/proof").json()
    wrapped = {"type": "object", "properties": {"checkpoint": {
        "allOf": [{"$ref": "#/components/schemas/SignedCheckpointOutput"}],
        "nullable": True, "type": "object"}}}

    assert proof["checkpoint"] is None
    assert strictly_allows(schema, "ProofOutput", proof)
    assert not strictly_allows({"components": {"schemas": {
        **schema["components"]["schemas"], "Wrapped": wrapped}}}, "Wrapped", proof)


@pytest.mark.parametrize("path", [
    "/api/v1/coupons", "/api/v1/coupons/{coupon}", "/api/v1/coupons/{coupon}/operations",
    "/api/v1/coupons/{coupon}/timeline", "/api/v1/templates", "/api/v1/return-policies",
    "/api/v1/return-policies/{policy}/versions"])
def test_an_answer_sends_every_field_its_schema_requires(schema, api, coupon, path):
    """`required` on answers holds: what the schema promises a generated client is there."""
    policy = ReturnPolicy.objects.earliest("pk")
    url = path.format(coupon=coupon.pk, policy=policy.pk)
    route = re.sub(r"/\d+", lambda _: "/{id}", url)
    [(template, operation)] = [
        (name, item["get"]) for name, item in schema["paths"].items()
        if re.sub(r"\{\w+\}", "{id}", name) == route]
    answer = api.get(url)
    component = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]

    assert answer.status_code == 200, template
    assert strictly_allows(schema, component.rsplit("/", 1)[1], answer.json())
    assert schema["components"]["schemas"][component.rsplit("/", 1)[1]]["required"]


def test_an_answer_without_a_required_field_is_refused(schema, api, coupon):
    answer = api.get(f"/api/v1/coupons/{coupon.pk}").json()
    component = schema["paths"]["/api/v1/coupons/{coupon_id}"]["get"]["responses"]["200"][
        "content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]

    assert strictly_allows(schema, component, answer)
    for field in schema["components"]["schemas"][component]["required"]:
        assert not strictly_allows(schema, component,
                                   {k: v for k, v in answer.items() if k != field}), field


def declared_only(node):
    """The schema with every object closed: an answer holding a field it does not declare
    fails (only for answers whose objects are not composed with allOf). OpenAPI's `nullable`
    becomes the JSON Schema type list the validator reads."""
    if isinstance(node, list):
        return [declared_only(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: declared_only(value) for key, value in node.items()}
    if "properties" in node and "additionalProperties" not in node:
        node["additionalProperties"] = False
    if node.get("nullable") and isinstance(node.get("type"), str):
        node["type"] = [node["type"], "null"]
    return node


def test_the_check_answer_declares_every_field_it_sends(schema, api, coupon):
    answer = api.get(f"/api/v1/coupons/{coupon.pk}/check").json()
    closed = declared_only(json.loads(json.dumps(schema["components"])))
    document = {"$ref": "#/components/schemas/CheckOutput", "components": closed}

    assert answer["diagnosis"]["pending"] == []
    assert jsonschema.Draft4Validator(document).is_valid(answer)
    assert "pending" in schema["components"]["schemas"]["DiagnosisOutput"]["required"]


@pytest.mark.parametrize(("url", "component", "body", "field"), [
    ("/api/v1/coupons", "IssueInputRequest", {"template_id": 1, "user_id": 0}, "user_id"),
    ("/api/v1/refunds", "RefundInputRequest",
     {"refund_id": "r-1", "order_id": "o-1", "payment_id": "p-1", "refund_amount": "1.00",
      "refund_type": "FULL", "risk_flag": 0}, "risk_flag"),
    ("/api/v1/refunds", "RefundInputRequest",
     {"refund_id": "r-1", "order_id": "o-1", "payment_id": "p-1", "refund_amount": "1.00",
      "refund_type": "FULL", "risk_flag": "yes"}, "risk_flag"),
])
def test_a_value_of_another_type_is_refused_not_coerced(schema, api, template, url, component,
                                                        body, field):
    body = {**body, "template_id": template.pk} if "template_id" in body else body

    response = api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k-coerce")

    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["details"]
    assert not allows(schema, component, body)


def test_an_empty_since_is_refused(schema, api, coupon):
    response = api.get(f"/api/v1/coupons/{coupon.pk}/proof", {"since": ""})
    proof = schema["paths"]["/api/v1/coupons/{coupon_id}/proof"]["get"]
    since = next(p for p in proof["parameters"] if p["name"] == "since")

    assert response.status_code == 400
    assert "since" in response.json()["error"]["details"]
    assert since["schema"]["type"] == "integer"


@pytest.mark.parametrize("body", [{}, {"action": "APPLY", "note": 42}, {"action": "BOGUS"},
                                  {"action": "DISMISS"}, {"action": "RESOLVE", "note": " "}])
def test_a_case_resolution_the_server_refuses_is_outside_the_schema(schema, body):
    assert not allows(schema, "CaseResolveInputRequest", body)


@pytest.mark.parametrize("body", [{"action": "APPLY"}, {"action": "APPLY", "note": "ok"},
                                  {"action": "DISMISS", "note": "paid twice"}])
def test_a_case_resolution_the_server_takes_is_inside_the_schema(schema, body):
    assert allows(schema, "CaseResolveInputRequest", body)


def test_a_numeric_note_on_a_case_is_refused(api, send, coupon):
    operator = staff("olga", "operator")

    response = operator.post("/api/v1/cases/1/resolve", {"action": "APPLY", "note": 42},
                             format="json", HTTP_IDEMPOTENCY_KEY="k-note")

    assert response.status_code == 400
    assert "note" in response.json()["error"]["details"]


@pytest.mark.parametrize(("lease", "valid"), [
    ({}, True), ({"lease_seconds": 60}, True), ({"lease_until": "2030-01-01T00:00:00Z"}, True),
    ({"lease_seconds": 60, "lease_until": "2030-01-01T00:00:00Z"}, False),
    ({"lease_until": None}, False)])
def test_a_lease_has_one_shape_in_the_schema(schema, lease, valid):
    body = {"order_id": "o-1", "user_id": "u1", "order_amount": "300.00", **lease}

    assert allows(schema, "LockInputRequest", body) is valid


def test_a_body_over_the_limit_is_a_declared_413(schema, api, coupon, settings):
    lock = schema["paths"]["/api/v1/coupons/{coupon_id}/lock"]["post"]["responses"]
    body = {"order_id": "o-1", "user_id": "u1", "order_amount": "300.00",
            "quote_id": "q" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)}

    answer = api.post(f"/api/v1/coupons/{coupon.pk}/lock", body, format="json",
                      HTTP_IDEMPOTENCY_KEY="k-413")

    assert answer.status_code == 413
    assert answer.json()["error"]["code"] == "REQUEST_TOO_LARGE"
    assert answer.json()["error"]["details"] == {
        "max_bytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}
    assert "413" in lock
    assert coupon.operations.count() == 1  # the ISSUE only


def test_an_accept_the_api_cannot_answer_is_a_declared_406(schema, api, coupon):
    answer = api.get(f"/api/v1/coupons/{coupon.pk}", HTTP_ACCEPT="text/html")

    assert answer.status_code == 406
    assert answer.json()["error"]["code"] == "NOT_ACCEPTABLE"
    assert all("406" in operation["responses"]
               for item in schema["paths"].values() for operation in item.values())


def test_options_is_a_declared_405_and_allow_never_lists_it(schema, api, coupon):
    answer = api.options(f"/api/v1/coupons/{coupon.pk}/lock")
    other = api.get(f"/api/v1/coupons/{coupon.pk}/lock")
    declared = schema["paths"]["/api/v1/coupons/{coupon_id}/lock"]["post"]["responses"]["405"]

    assert answer.status_code == other.status_code == 405
    assert answer.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    assert answer["Allow"] == other["Allow"] == "POST"
    assert declared["headers"]["Allow"]["required"] is True


def test_a_cursor_the_server_hands_out_matches_the_schemas_pattern(schema, api, coupon):
    listing = schema["paths"]["/api/v1/coupons/{coupon_id}/operations"]["get"]
    pattern = next(p for p in listing["parameters"] if p["name"] == "cursor")["schema"]["pattern"]
    api.post(f"/api/v1/coupons/{coupon.pk}/lock",
             {"order_id": "o-1", "user_id": "u1", "order_amount": "300.00"}, format="json",
             HTTP_IDEMPOTENCY_KEY="k-cursor")

    first = api.get(f"/api/v1/coupons/{coupon.pk}/operations", {"cursor": "", "page_size": 1})
    cursor = parse_qs(urlsplit(first.json()["next"]).query)["cursor"][0]

    assert re.fullmatch(pattern, cursor) and re.fullmatch(pattern, "")
    for invalid in ("abc", "0", cursor + " ", "x:y"):
        assert not re.fullmatch(pattern, invalid), invalid


@pytest.mark.parametrize("policy", [0, -1, 2**63, "", "no such code!", "x" * 65, True])
def test_a_malformed_return_policy_is_refused_by_both(schema, api, policy):
    body = {"code": "off5", "name": "5 off", "kind": "AMOUNT_OFF", "face_value": "5.00",
            "valid_days": 30, "return_policy": policy}

    response = api.post("/api/v1/templates", body, format="json", HTTP_IDEMPOTENCY_KEY="k-rp")

    assert response.status_code == 400, response.json()
    assert "return_policy" in response.json()["error"]["details"]
    assert not allows(schema, "TemplateInputRequest", body)


@pytest.mark.parametrize("policy", [1, "default-policy", None])
def test_a_well_formed_return_policy_is_inside_the_schema(schema, policy):
    body = {"code": "off5", "name": "5 off", "kind": "AMOUNT_OFF", "face_value": "5.00",
            "valid_days": 30, "return_policy": policy}

    assert strictly_allows(schema, "TemplateInputRequest", body)

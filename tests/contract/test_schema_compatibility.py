"""A minor release keeps what the previous release published (docs/api.md, "Versions"): every
component name (a generated client's type names), every enum member and every operation id (its
method names). The published schema of each release is kept in schemas/released/; a removal or
a rename there fails here, as it would break the clients generated from it."""

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from drf_spectacular.generators import SchemaGenerator

from api.schema import OPEN_SETS

pytestmark = pytest.mark.django_db
RELEASED = sorted((Path(__file__).resolve().parents[2] / "schemas" / "released").glob(
    "openapi-*.yaml"))


@pytest.fixture(scope="module")
def live(django_db_blocker):
    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


def enum_members(node) -> set:
    """Every value an `enum` anywhere in `node` names (an open set's known members included),
    but the null of a nullable branch."""
    if isinstance(node, list):
        return set().union(*(enum_members(item) for item in node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found = {value for value in node.get("enum", []) if value is not None}
    return found.union(*(enum_members(value) for key, value in node.items() if key != "enum"))


def operation_ids(schema) -> set[str]:
    return {operation["operationId"] for item in schema["paths"].values()
            for operation in item.values() if "operationId" in operation}


def breaking_changes(released: dict, current: dict) -> list[str]:
    """What `current` removed or renamed of `released`: components, enum members, operations."""
    before, after = released["components"]["schemas"], current["components"]["schemas"]
    problems = [f"component {name} is gone (removed or renamed)"
                for name in sorted(set(before) - set(after))]
    for name in sorted(set(before) & set(after)):
        lost = enum_members(before[name]) - enum_members(after[name])
        if lost:
            problems.append(f"{name} lost {sorted(lost)}")
    problems += [f"operation {name} is gone (removed or renamed)"
                 for name in sorted(operation_ids(released) - operation_ids(current))]
    return problems


def test_a_released_schema_is_kept():
    assert [path.name for path in RELEASED][:1] == ["openapi-1.0.0.yaml"]


@pytest.mark.parametrize("released", RELEASED, ids=lambda path: path.stem)
def test_the_schema_keeps_every_name_and_member_a_release_published(live, released):
    assert breaking_changes(yaml.safe_load(released.read_text()), live) == []


def test_a_rename_a_removed_member_and_a_removed_operation_are_caught(live):
    released = yaml.safe_load(RELEASED[0].read_text())
    current = yaml.safe_load(yaml.safe_dump(live))
    schemas = current["components"]["schemas"]
    schemas["LockAnswer"] = schemas.pop("LockOutput")
    schemas["CouponStatusEnum"]["enum"].remove("VOID")
    del current["paths"]["/api/v1/coupons/{coupon_id}/void"]

    assert breaking_changes(released, current) == [
        "component LockOutput is gone (removed or renamed)",
        "CouponStatusEnum lost ['VOID']",
        "operation coupons_void_create is gone (removed or renamed)"]


def answer_allows(schema, component: str, body) -> bool:
    document = json.loads(json.dumps({"$ref": f"#/components/schemas/{component}",
                                      "components": schema["components"]}))
    return jsonschema.Draft4Validator(document).is_valid(body)


@pytest.mark.parametrize(("code", "allowed"), [
    ("TOKEN_MISMATCH", True), ("QUOTA_EXCEEDED", True), ("token_mismatch", False), ("", False)])
def test_an_error_code_a_later_minor_version_adds_is_a_valid_answer(live, code, allowed):
    """ErrorCodeEnum grows in minor versions: an answer's code is that enum or such a code,
    so a client validating answers with today's schema takes tomorrow's."""
    error = {"code": code, "message": "m", "details": {}}
    rejection = {"id": 1, "op_type": "LOCK", "order_id": "o", "actor": "a", "error_code": code,
                 "message": "m", "details": {}, "created_at": "2026-06-01T12:00:00Z"}

    assert answer_allows(live, "ErrorOutput", {"error": error}) is allowed
    assert answer_allows(live, "RejectionOutput", rejection) is allowed
    assert live["components"]["schemas"]["ErrorCodeEnum"]["x-extensible-enum"] is True


def test_a_later_minor_version_of_the_api_may_answer(live):
    header = live["paths"]["/api/v1/coupons"]["get"]["responses"]["200"]["headers"][
        "API-Version"]["schema"]

    assert re.fullmatch(header["pattern"], live["info"]["version"])
    assert re.fullmatch(header["pattern"], "1.4.2")
    assert not re.fullmatch(header["pattern"], "2.0.0")


def property_allows(schema, component: str, field: str, value) -> bool:
    spec = schema["components"]["schemas"][component]["properties"][field]
    document = json.loads(json.dumps({**spec, "components": schema["components"]}))
    return jsonschema.Draft4Validator(document).is_valid(value)


@pytest.mark.parametrize(("outcome", "allowed"), [
    ({"action": "COUPON_GIFTED", "repeated_fact": False, "gift_id": 3}, True),
    ({"action": "CASE_OPENED", "repeated_fact": False}, False),  # a known action's shape
    ({"action": "coupon_gifted", "repeated_fact": False}, False),
    ({"repeated_fact": False}, False)])
def test_an_outcome_action_a_later_minor_version_adds_is_a_valid_answer(live, outcome, allowed):
    """Outcome actions grow in minor versions: an action the union does not map is the open
    branch's, and a known action still has to have its own shape."""
    answer = {"message_id": "m-1", "status": "PROCESSED", "outcome": outcome}

    assert answer_allows(live, "EventOutput", answer) is allowed
    assert live["components"]["schemas"]["EventOutcome"]["x-extensible-enum"] is True


@pytest.mark.parametrize(("component", "field", "value", "allowed"), [
    ("OperationOutput", "op_type", "REDEEM", True), ("OperationOutput", "op_type", "SPLIT", True),
    ("ProofOperationOutput", "op_type", "SPLIT", True),
    ("OperationOutput", "op_type", "split", False),
    ("TimelineEntryOutput", "kind", "note", True), ("TimelineEntryOutput", "kind", "gift", True),
    ("TimelineEntryOutput", "kind", "Gift", False)])
def test_an_operation_or_timeline_kind_a_later_minor_version_adds_is_a_valid_answer(
        live, component, field, value, allowed):
    assert property_allows(live, component, field, value) is allowed


def test_requests_keep_their_closed_sets(live):
    """Open only in answers: a request still names a member the server knows."""
    opened = [f"#/components/schemas/{name}" for name in OPEN_SETS]
    for name, component in live["components"]["schemas"].items():
        if name.endswith("Request"):
            for field, spec in component.get("properties", {}).items():
                assert not any(branch.get("$ref") in opened for branch in spec.get("anyOf", [])), (
                    name, field)

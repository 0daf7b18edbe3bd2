"""`POST /events` answers one declared shape per outcome action: every answer of a story that
reaches most actions validates against exactly one branch of the union, the one its `action`
names, and sends no field that branch leaves out."""

import json
from datetime import timedelta

import jsonschema
import pytest
from drf_spectacular.generators import SchemaGenerator

from coupons import clock
from coupons.events.handlers import OUTCOME_ACTIONS
from coupons.services import coupon_issue, coupon_release
from tests.conftest import lock
from tests.coupons.events.test_presale import deposit, final_payment, issue, presale_template

pytestmark = pytest.mark.django_db


def nullable_as_json_schema(node):
    """OpenAPI 3.0's `nullable: true` as JSON Schema says it: null is one more allowed type."""
    if isinstance(node, list):
        return [nullable_as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: nullable_as_json_schema(value) for key, value in node.items()}
    if node.pop("nullable", False):
        return {"anyOf": [node, {"type": "null"}]}
    return node


@pytest.fixture(scope="module")
def schema():
    generated = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    return nullable_as_json_schema(generated)


def branch_of(schema, action) -> dict:
    union = schema["components"]["schemas"]["EventOutcome"]
    return schema["components"]["schemas"][
        union["discriminator"]["mapping"][action].rsplit("/", 1)[1]]


def matching_branches(schema, outcome) -> list[str]:
    union = schema["components"]["schemas"]["EventOutcome"]
    names = [ref["$ref"].rsplit("/", 1)[1] for ref in union["oneOf"]]
    return [name for name in names if jsonschema.Draft4Validator(
        {"$ref": f"#/components/schemas/{name}", "components": schema["components"]}
    ).is_valid(outcome)]


def undeclared(schema, outcome) -> set[str]:
    return set(outcome) - set(branch_of(schema, outcome["action"])["properties"])


def story(template, ctx, send) -> list[dict]:
    """Facts that reach twelve of the twenty actions, each answer as the sender got it."""
    coupons = [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
               for _ in range(3)]
    paid, closed, late = coupons
    answers = [send("OrderClosed", order_id="no-such-order")]
    lock(paid, ctx, order_id="order-A")
    answers += [send("PaymentSucceeded", order_id="order-A", payment_id="pay-order-A"),
                send("PaymentSucceeded", order_id="order-A", payment_id="pay-order-A"),
                send("OrderClosed", order_id="order-A")]
    lock(closed, ctx, order_id="order-B")
    answers += [send("OrderClosed", order_id="order-B"), send("PaymentFailed", order_id="order-B")]
    _, lease = lock(late, ctx, order_id="order-C")
    coupon_release(coupon_id=late.pk, lease=lease, ctx=ctx, reason="timed out")
    lock(late, ctx, order_id="order-D")
    answers.append(send("PaymentSucceeded", order_id="order-C", payment_id="pay-C"))
    for refund_id, order_id in (("r-1", "order-A"), ("r-2", "no-such-order")):
        answers.append(send("RefundSucceeded", order_id=order_id, payment_id=f"pay-{order_id}",
                            refund_id=refund_id, refund_amount="300.00", refund_type="FULL"))
    presale = issue(presale_template("presale"))
    answers += [deposit(send, presale), deposit(send, presale), final_payment(send)]
    answers.append(deposit(send, issue(presale_template("other")), order_id="PS-1"))
    answers.append(send("DepositPaid", order_id="PS-9", coupon_id=999_999, user_id="u1",
                        order_amount="300.00",
                        final_payment_deadline=(clock.now() + timedelta(days=9)).isoformat()))
    return [answer["outcome"] for answer in answers]


def test_every_action_has_exactly_one_declared_shape(schema):
    union = schema["components"]["schemas"]["EventOutcome"]

    assert set(union["discriminator"]["mapping"]) == set(OUTCOME_ACTIONS)
    for action in OUTCOME_ACTIONS:
        enum = schema["components"]["schemas"][
            branch_of(schema, action)["properties"]["action"]["$ref"].rsplit("/", 1)[1]]["enum"]
        assert action in enum
        assert {"action", "repeated_fact"} <= set(branch_of(schema, action)["required"])


def test_each_answer_matches_the_one_branch_its_action_names(schema, template, ctx, send):
    outcomes = story(template, ctx, send)

    assert {outcome["action"] for outcome in outcomes} >= {
        "NO_COUPON", "REDEEMED", "ALREADY_REDEEMED", "IGNORED", "RELEASED",
        "NOTHING_TO_RELEASE", "CASE_OPENED", "REFUND_DECIDED", "NO_COUPON_DECISION",
        "LOCKED", "ALREADY_LOCKED", "LOCK_REFUSED"}
    for outcome in outcomes:
        expected = branch_of(schema, outcome["action"])
        assert matching_branches(schema, outcome) == [
            name for name, body in schema["components"]["schemas"].items() if body is expected
        ], outcome
        assert undeclared(schema, outcome) == set(), outcome


def test_an_outcome_missing_a_field_its_action_promises_matches_no_branch(schema):
    case = {"action": "CASE_OPENED", "repeated_fact": False, "coupon_id": 1, "case_id": 2,
            "recommendation": "ORDER_DISCOUNT_REFUND", "error_code": "TOKEN_MISMATCH",
            "error_details": {}}
    without_case = {key: value for key, value in case.items() if key != "case_id"}

    assert matching_branches(schema, case) == ["CaseOutcome"]
    assert matching_branches(schema, without_case) == []
    assert undeclared(schema, {**case, "surprise": 1}) == {"surprise"}

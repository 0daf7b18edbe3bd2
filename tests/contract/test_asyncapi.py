"""schemas/asyncapi.yaml describes the broker as it is: every message the relay publishes and
every fact the consumer accepts matches it (routing key, headers, body), and the fact schemas
it references are the API's own (coupons.api.fact_schemas)."""

import json
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator, FormatChecker

from coupons.api.fact_schemas import fact_schemas
from coupons.models import FactType, InboxMessage
from coupons.write.records import EVENT_TYPES
from operations.relay import Relay
from tests.contract.test_event_schemas import EMITTED, every_event
from tests.operations.facts.conftest import event_body, facts_broker, make_consumer  # noqa: F401
from tests.operations.facts.test_consume_facts import coupons, story  # noqa: F401
from tests.operations.relay.conftest import broker_queue  # noqa: F401

pytestmark = pytest.mark.django_db
SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
DOCUMENT = yaml.safe_load((SCHEMAS / "asyncapi.yaml").read_text())


def resolve(node: dict) -> dict:
    """A `$ref` of the document: a local pointer or a file beside it."""
    ref = node.get("$ref")
    if ref is None:
        return node
    if ref.startswith("#/"):
        target = DOCUMENT
        for part in ref[2:].split("/"):
            target = target[part]
        return resolve(target)
    return json.loads((SCHEMAS / ref).read_text())


def channel(name: str) -> dict:
    return DOCUMENT["channels"][name]


def message(channel_name: str, name: str) -> dict:
    """A channel's message with its payload and headers schemas resolved."""
    declared = resolve(channel(channel_name)["messages"][name])
    return {**declared, **{part: resolve(declared[part]) for part in ("payload", "headers")}}


def parsed(body: bytes):
    try:
        return json.loads(body)
    except ValueError:
        return None


def problems(schema: dict, instance) -> list[str]:
    validator = Draft202012Validator(schema, format_checker=FormatChecker())
    return [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(instance)]


def test_the_document_names_every_event_and_fact_with_the_code_s_exchanges():
    events, facts = channel("couponEvents"), channel("facts")

    assert set(events["messages"]) == set(events["parameters"]["eventType"]["enum"]) == EMITTED
    assert set(facts["messages"]) == set(FactType.values)
    assert events["bindings"]["amqp"]["exchange"]["name"] == Relay(exchange="coupons").exchange
    assert facts["bindings"]["amqp"]["exchange"]["name"] == "facts"
    assert channel("deadFacts")["address"] == "coupons.facts.dead"
    assert set(EVENT_TYPES.values()) <= EMITTED


def test_the_fact_schemas_are_the_api_s_own():
    for fact_type, schema in fact_schemas().items():
        written = json.loads((SCHEMAS / "facts" / f"{fact_type}.json").read_text())
        assert written == schema, (
            f"schemas/facts/{fact_type}.json is stale: run scripts/write_fact_schemas.py")


def test_every_message_the_relay_publishes_matches_the_document(template, ctx, clock, send,
                                                                broker_queue):  # noqa: F811
    every_event(template, ctx, clock, send)
    relay = Relay(exchange=broker_queue.exchange)
    while relay.run_batch().published:
        pass
    relay.close()
    published = broker_queue.drain()
    delivery_mode = DOCUMENT["operations"]["publishCouponEvents"]["bindings"]["amqp"][
        "deliveryMode"]

    assert {m["routing_key"] for m in published} == EMITTED
    found = {}
    for sent in published:
        declared = message("couponEvents", sent["routing_key"])
        found[sent["message_id"]] = (
            problems(declared["payload"], sent["body"])
            + problems(declared["headers"], sent["headers"])
            + ([] if sent["headers"]["event_type"] == declared["bindings"]["amqp"]["messageType"]
               else ["event_type header is not the routing key"])
            + ([] if sent["delivery_mode"] == delivery_mode else ["not persistent"]))
    assert {key: errors for key, errors in found.items() if errors} == {}


def test_a_message_outside_the_document_is_caught():
    declared = message("couponEvents", "CouponLocked")

    assert problems(declared["headers"], {"event_id": 1, "event_type": "CouponLocked",
                                                   "coupon_id": 1})  # no state_version
    assert problems(message("facts", "OrderClosed")["payload"], {
        "message_id": " m-1", "type": "OrderClosed", "occurred_at": "2026-01-01T00:00:00Z",
        "payload": {"order_id": "o-1"}})


def test_every_fact_the_consumer_accepts_matches_the_document_and_its_refusals_do_not(
        coupons, clock, service_client, facts_broker, make_consumer):  # noqa: F811
    at = clock.now()
    bodies = [*story(clock),
              event_body("m20", "FinalPaymentSucceeded", at, order_id="O9", payment_id="FP"),
              event_body("m21", "RefundSucceeded", at, order_id="O9", payment_id="P9",
                         refund_id="R9", refund_amount="10.00", refund_type="PARTIAL"),
              event_body("m22", "OrderClosed", at, order_id="O1 ")]
    for body in bodies:
        fact = parsed(body)
        facts_broker.publish(body, routing_key=fact["type"] if isinstance(fact, dict) else "x")
    facts_broker.publish(event_body("m23", "OrderClosed", at, order_id="O8"),
                         headers={"sender": "someone-else"})
    make_consumer(service_client[0]).run(once=True)

    accepted = set(InboxMessage.objects.values_list("message_id", flat=True))
    letters = facts_broker.dead_letters()
    dead_letter_headers = message("deadFacts", "DeadLetter")["headers"]
    assert {"m20", "m21"} <= accepted and "m22" not in accepted
    for body in bodies:
        fact = parsed(body)
        if isinstance(fact, dict) and fact.get("message_id") in accepted:
            assert not problems(message("facts", fact["type"])["payload"], fact), fact
    for letter in letters:
        assert not problems(dead_letter_headers, letter["headers"]), letter["headers"]
        if letter["headers"]["dead_letter_code"] in ("VALIDATION_ERROR", "INVALID_JSON"):
            fact = parsed(letter["body"])
            if isinstance(fact, dict) and fact.get("type") in FactType.values:
                assert problems(message("facts", fact["type"])["payload"], fact), fact
    assert {"SENDER_MISMATCH", "VALIDATION_ERROR"} <= {
        letter["headers"]["dead_letter_code"] for letter in letters}

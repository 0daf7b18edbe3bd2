"""Every broker message has a published JSON Schema (schemas/events/<EventType>.json), and the
events the services really write validate against it."""

import json
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from coupons.evidence.tips import journal_tip
from coupons.models import CouponStatus, OutboxEvent
from coupons.services import CommandContext, coupon_issue, coupon_redeem
from coupons.services.expiry_warning import EVENT_TYPE as EXPIRY_WARNING
from coupons.services.final_payment_reminder import EVENT_TYPE as WINDOW_OPENED
from coupons.write.records import EVENT_TYPES
from coupons.write.transitions import TRANSITIONS
from operations.checkpoint import EVENT_TYPE as CHECKPOINTED
from operations.checkpoint import ledger_checkpoint
from operations.relay import message_body, message_properties
from operations.scanners import scan_final_payment_windows, scan_presale_expiry
from refunds.models import Compensation
from refunds.services.compensation_decide import compensation_approve
from refunds.services.compensation_propose import compensation_propose
from tests.conftest import lock
from tests.coupons.events.test_presale import deposit, presale_template
from tests.operations.relay.history import every_command
from tests.refunds.conftest import refund

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "events"
# Every event the code writes to the outbox: one per ledger operation type, and the presale
# expiry warning and the final-payment reminder (notifications that change no state) and the
# ledger checkpoint (about no coupon).
EMITTED = {*EVENT_TYPES.values(), EXPIRY_WARNING, WINDOW_OPENED, CHECKPOINTED}

pytestmark = pytest.mark.django_db


def validator(event_type: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{event_type}.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def problems(event_type: str, payload: dict) -> list[str]:
    return [error.message for error in validator(event_type).iter_errors(payload)]


def test_every_event_type_has_a_schema_and_every_schema_an_event_type():
    published = {path.stem for path in SCHEMAS.glob("*.json")}

    assert published == EMITTED


@pytest.mark.parametrize("op_type", sorted(set(TRANSITIONS) - {"ISSUE"}))
def test_each_schema_allows_exactly_the_transitions_of_its_command(op_type):
    schema = json.loads((SCHEMAS / f"{EVENT_TYPES[op_type]}.json").read_text())
    states = schema["properties"]
    pairs = {(branch["properties"]["from_state"]["const"],
              branch["properties"]["to_state"]["const"]) for branch in schema.get("oneOf", [])}
    pairs = pairs or {(states["from_state"]["enum"][0], states["to_state"]["enum"][0])}

    assert pairs == {(f, t) for f, tos in TRANSITIONS[op_type].items() for t in tos}


@pytest.fixture(autouse=True)
def own_checkpoint_directory(settings, tmp_path):
    """The signer trusts the files of its directory: each test signs into one of its own."""
    settings.LEDGER_CHECKPOINT_DIR = str(tmp_path / "checkpoints")


def every_event(template, ctx, clock, send) -> list[OutboxEvent]:
    """Every command through the real services: issue, lock, renew, release, redeem, void and expire
    (tests.operations.relay.history), then return (a refund under the default policy), reverse (the
    void, approved) and compensate (money, approved); and the presale expiry warning (a DepositPaid
    fact locks a STRICT coupon that expires before the final payment); and two ledger checkpoints
    (the second names the first)."""
    presale = coupon_issue(template_id=presale_template("presale", "STRICT").pk,
                           user_id="u7", ctx=ctx).coupon
    deposit(send, presale)
    scan_presale_expiry()
    scan_final_payment_windows()
    voided, _ = every_command(template, ctx, clock)
    refunded = coupon_issue(template_id=template.pk, user_id="u9", ctx=ctx).coupon
    _, proof = lock(refunded, ctx, order_id="order-R")
    coupon_redeem(coupon_id=refunded.pk, lease=proof, payment_id="pay-order-R", ctx=ctx)
    refund(ctx, "refund-1", order_id="order-R", amount="300.00")

    proposer, approver = CommandContext(actor="user:alice"), CommandContext(actor="user:bob")
    for coupon, amount in ((voided, None), (refunded, Decimal("5.00"))):
        latest = coupon.operations.latest("to_version")
        proposal = compensation_propose(coupon_id=coupon.pk, operation_id=latest.pk,
                                        reason="support call", amount=amount, ctx=proposer)
        compensation_approve(compensation_id=proposal.pk, ctx=approver,
                             seen_entry=journal_tip(Compensation, proposal.pk))
    ledger_checkpoint()
    ledger_checkpoint()
    return list(OutboxEvent.objects.order_by("pk"))


def test_every_event_the_services_write_validates_against_its_schema(template, ctx, clock,
                                                                     send):
    events = every_event(template, ctx, clock, send)

    assert {event.event_type for event in events} == EMITTED
    found = {event.pk: problems(event.event_type, message_body(event)) for event in events}
    assert {pk: errors for pk, errors in found.items() if errors} == {}


def test_a_schema_refuses_an_event_that_breaks_it(template, ctx, clock, send):
    events = every_event(template, ctx, clock, send)
    locked = next(event for event in events if event.event_type == "CouponLocked")
    compensated = next(event for event in events if event.event_type == "CouponCompensated")

    locked_body = message_body(locked)
    no_amount = {k: v for k, v in message_body(compensated).items() if k != "amount"}

    assert problems("CouponLocked", {**locked_body, "to_state": CouponStatus.USED})
    assert problems("CouponLocked", {**locked_body, "lock_token": "secret"})
    assert problems("CouponLocked", {**locked_body, "occurred_at": "yesterday"})
    assert problems("CouponLocked", {**locked_body, "event_type": "CouponRedeemed"})
    assert problems("CouponLocked", locked.payload)  # no event id, no type
    assert problems("CouponCompensated", no_amount)
    warning = next(event for event in events if event.event_type == EXPIRY_WARNING)
    assert problems(EXPIRY_WARNING, {**message_body(warning), "strategy": "LOCK_HONORS"})
    reminder = next(event for event in events if event.event_type == WINDOW_OPENED)
    assert problems(WINDOW_OPENED, {**message_body(reminder), "discount_amount": 50})
    assert problems(WINDOW_OPENED, {k: v for k, v in message_body(reminder).items()
                                    if k != "reminder_id"})


def test_the_event_id_is_the_one_key_unique_across_every_event(template, ctx, clock, send):
    """What the documents tell consumers to de-duplicate on keeps every event apart; the pair
    they once offered (coupon and version) merges the presale warning with its lease's lock
    and every checkpoint with the others."""
    events = every_event(template, ctx, clock, send)
    headers = [message_properties(event).headers for event in events]
    pairs = Counter((h["coupon_id"], h["state_version"]) for h in headers)

    assert len({h["event_id"] for h in headers}) == len(headers)
    # The body carries the same id and type as the headers: forwarded alone, it keeps both.
    assert [(message_body(e)["event_id"], message_body(e)["event_type"]) for e in events] == [
        (h["event_id"], h["event_type"]) for h in headers]
    assert pairs[(None, None)] == 2
    assert any(count > 1 for (coupon, _), count in pairs.items() if coupon is not None)


def offered_keys(text: str) -> list[str]:
    """The de-duplication keys a document offers other than the event id alone."""
    text = " ".join(text.split())
    offers = []
    for found in re.finditer(r"(not an? )?de-?duplicat\w*(?: on ([^.:;]*)| key)", text, re.I):
        negated, key = found.groups()
        if key is None:
            offers += [] if negated else [found.group()]
        elif not re.match(r"\W*the event id\b|`event_id`|it\b", key, re.I) \
                or re.search(r"\bor\b|\+", key):
            offers.append(found.group())
    return offers


def test_the_documents_offer_no_other_de_duplication_key():
    documents = [SCHEMAS.parent / "asyncapi.yaml", *SCHEMAS.glob("*.json"),
                 SCHEMAS.parents[1] / "docs" / "events.md"]

    assert {path.name: offered_keys(path.read_text()) for path in documents
            if offered_keys(path.read_text())} == {}


@pytest.mark.parametrize("offer", [
    "de-duplicate on the event id (or coupon_id + state_version).",
    "with `state_version`, the consumer's de-duplication key.",
    "At least once: de-duplicate on `number`.",
])
def test_the_document_check_sees_a_second_key(offer):
    assert offered_keys(offer)

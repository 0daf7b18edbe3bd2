"""The inbox de-duplicates per sender and by content.

The issue's reproduction: client X posted message_id "pay-o-6b-1" as a PaymentFailed; the
order service's real PaymentSucceeded under that id was answered DUPLICATE and never recorded,
so the paid order lost its coupon to the lease scanner.
"""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from coupons.events.inbox import inbox_receive
from coupons.models import InboxMessage, OrderFact, Redemption
from coupons.services import service_client_create
from operations.scanners import scan_leases
from tests.command_checks import world
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db


def client_sending(name, *fact_types):
    client = APIClient()
    key = service_client_create(name=name, fact_types=fact_types)[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def fact(client, message_id, fact_type, occurred_at=START, **payload):
    return client.post("/api/v1/events", {
        "message_id": message_id, "type": fact_type, "occurred_at": occurred_at.isoformat(),
        "payload": payload,
    }, format="json")


def inbox() -> list[tuple]:
    return list(InboxMessage.objects.order_by("pk").values_list(
        "sender", "message_id", "fact_type", "order_id"))


def test_another_senders_message_id_does_not_shadow_the_orders_payment(coupon, ctx, clock, send):
    lock(coupon, ctx, order_id="o-6b", lease_seconds=600)
    x = client_sending("client-x", "PaymentFailed")
    assert fact(x, "pay-o-6b-1", "PaymentFailed", order_id="o-other").status_code == 202

    answer = send("PaymentSucceeded", message_id="pay-o-6b-1", order_id="o-6b",
                  payment_id="P-6b")

    assert (answer["status"], answer["outcome"]["action"]) == ("PROCESSED", "REDEEMED")
    assert inbox() == [
        ("client:client-x", "pay-o-6b-1", "PaymentFailed", "o-other"),
        ("client:order-service", "pay-o-6b-1", "PaymentSucceeded", "o-6b"),
    ]
    clock.advance(seconds=601)
    scan_leases()
    coupon.refresh_from_db()
    assert coupon.status == "USED"
    assert Redemption.objects.get().payment_id == "P-6b"


def test_same_sender_same_id_other_content_is_422_and_records_nothing(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    first = send("OrderClosed", message_id="m-1", order_id="NO-COUPON")
    before, messages, facts = world(), inbox(), OrderFact.objects.count()

    answer = send("PaymentSucceeded", message_id="m-1", expect=422, order_id="A",
                  payment_id="P-A")

    assert answer["error"] == {
        "code": "MESSAGE_ID_REUSED",
        "message": "This sender already sent another fact under this message_id.",
        "details": {"message_id": "m-1"},
    }
    assert (world(), inbox(), OrderFact.objects.count()) == (before, messages, facts)
    # the first message still answers its redeliveries
    again = send("OrderClosed", message_id="m-1", order_id="NO-COUPON")
    assert (again["status"], again["outcome"]) == ("DUPLICATE", first["outcome"])


@pytest.mark.parametrize("changed", [
    {"payload": {"order_id": "A", "payment_id": "P-B"}},
    {"occurred_at": START + timedelta(seconds=1)},
    {"fact_type": "FinalPaymentSucceeded"},
], ids=["payload", "occurred_at", "type"])
def test_any_change_to_what_a_message_says_is_message_id_reused(coupon, ctx, api, changed):
    lock(coupon, ctx, order_id="A")
    sent = {"fact_type": "PaymentSucceeded", "occurred_at": START,
            "payload": {"order_id": "A", "payment_id": "P-A"}}
    assert fact(api, "m-1", sent["fact_type"], sent["occurred_at"],
                **sent["payload"]).status_code == 202
    sent.update(changed)

    response = fact(api, "m-1", sent["fact_type"], sent["occurred_at"], **sent["payload"])

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "MESSAGE_ID_REUSED"
    assert InboxMessage.objects.count() == 1


def test_a_redelivery_naming_the_same_instant_in_another_offset_is_a_duplicate(
    coupon, ctx, api,
):
    lock(coupon, ctx, order_id="A")
    first = api.post("/api/v1/events", {
        "message_id": "m-1", "type": "PaymentSucceeded", "occurred_at": "2026-06-01T12:00:00Z",
        "payload": {"order_id": "A", "payment_id": "P-A"}}, format="json")

    again = api.post("/api/v1/events", {
        "message_id": "m-1", "type": "PaymentSucceeded",
        "occurred_at": "2026-06-01T20:00:00+08:00",
        "payload": {"payment_id": "P-A", "order_id": "A"}}, format="json")

    assert again.json()["status"] == "DUPLICATE"
    assert again.json()["outcome"] == first.json()["outcome"]


def test_each_sender_redelivering_one_message_id_gets_its_own_first_answer(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    x = client_sending("client-x", "OrderClosed")
    first_x = fact(x, "m-1", "OrderClosed", order_id="NO-COUPON").json()
    first_ours = send("PaymentSucceeded", message_id="m-1", order_id="A", payment_id="P-A")

    again_x = fact(x, "m-1", "OrderClosed", order_id="NO-COUPON")
    again_ours = send("PaymentSucceeded", message_id="m-1", order_id="A", payment_id="P-A")

    assert again_x.status_code == 202
    assert (again_x.json()["status"], again_x.json()["outcome"]) == (
        "DUPLICATE", first_x["outcome"])
    assert (again_ours["status"], again_ours["outcome"]) == ("DUPLICATE", first_ours["outcome"])
    assert len(inbox()) == 2


def test_a_redelivery_of_one_instant_in_another_offset_is_a_duplicate_in_the_inbox(coupon, ctx):
    # The API hands the inbox its times in the server's zone; seed_demo and any later door
    # may not, and the first delivery's hash is stored for good.
    lock(coupon, ctx, order_id="A")
    message = {"message_id": "m-1", "fact_type": "PaymentSucceeded", "order_id": "A",
               "payload": {"order_id": "A", "payment_id": "P-A"},
               "sender": "client:order-service", "sender_scope": "client:1"}
    first = inbox_receive(occurred_at=START, **message)

    again = inbox_receive(occurred_at=START.astimezone(ZoneInfo("Asia/Shanghai")), **message)

    assert (again.status, again.message.outcome) == ("DUPLICATE", first.message.outcome)


def test_a_redelivery_after_the_server_zone_changed_is_a_duplicate(coupon, ctx, api):
    lock(coupon, ctx, order_id="A")
    first = fact(api, "m-1", "PaymentSucceeded", order_id="A", payment_id="P-A")

    with timezone.override(ZoneInfo("America/New_York")):
        again = fact(api, "m-1", "PaymentSucceeded", order_id="A", payment_id="P-A")

    assert again.status_code == 202, again.json()
    assert (again.json()["status"], again.json()["outcome"]) == (
        "DUPLICATE", first.json()["outcome"])

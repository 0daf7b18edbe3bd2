"""`manage.py consume_facts`: facts from the broker take the inbox's path of POST /events."""

import json
import socket
import threading
import time
import urllib.request
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError, connection, transaction

from coupons.models import (
    ConflictCase,
    CouponOperation,
    InboxMessage,
    OutboxEvent,
    UserCoupon,
)
from coupons.services import coupon_issue, service_client_create
from operations import facts_consumer
from operations.worker import retry_delay
from tests.conftest import START, lock
from tests.coupons.events.test_presale import presale_template
from tests.operations.facts.conftest import event_body

pytestmark = pytest.mark.django_db

DEADLINE = START + timedelta(days=14)
# Ids that differ between two runs of one story (random lease ids, PostgreSQL sequences).
RUN_SPECIFIC = {"lock_id", "case_id", "redemption_id"}


def story(clock) -> list[bytes]:
    """Duplicates, reordered facts and poison, in delivery order."""
    at = clock.now()
    coupon_3 = UserCoupon.objects.get(user_id="u3")
    return [
        event_body("m1", "PaymentSucceeded", at, order_id="O1", payment_id="P1"),
        event_body("m1", "PaymentSucceeded", at, order_id="O1", payment_id="P1"),  # redelivery
        event_body("m2", "PaymentSucceeded", at, order_id="O1", payment_id="P1"),  # same fact
        event_body("m3", "OrderClosed", at, order_id="O2"),
        event_body("m4", "PaymentFailed", at, order_id="O2"),  # sent before the close
        event_body("m5", "OrderClosed", at, order_id="O3"),  # overtook its deposit
        event_body("m6", "DepositPaid", at, order_id="O3", coupon_id=coupon_3.pk, user_id="u3",
                   order_amount="1000.00", final_payment_deadline=DEADLINE.isoformat()),
        event_body("m7", "OrderClosed", at, order_id="O4"),
        event_body("m8", "PaymentSucceeded", at, order_id="O4", payment_id="P4"),  # too late
        b"{not json",
        event_body("m9", "CouponStolen", at, order_id="O1"),
        event_body("m10", "DepositPaid", at, order_id="O5", user_id="u5",
                   order_amount="1000.00", final_payment_deadline=DEADLINE.isoformat()),
        event_body("m1", "PaymentSucceeded", at, order_id="O1", payment_id="P9"),  # id reused
        b"[1, 2]",
    ]


POISON_CODES = ["INVALID_JSON", "VALIDATION_ERROR", "VALIDATION_ERROR", "MESSAGE_ID_REUSED",
                "VALIDATION_ERROR"]


@pytest.fixture
def coupons(template, ctx, clock):
    for n in (1, 2, 4):
        coupon = coupon_issue(template_id=template.pk, user_id=f"u{n}", ctx=ctx).coupon
        lock(coupon, ctx, order_id=f"O{n}")
    strict = presale_template("presale-strict", "STRICT")
    coupon_issue(template_id=strict.pk, user_id="u3", ctx=ctx)


def stripped(outcome: dict) -> dict:
    return {k: v for k, v in outcome.items() if k not in RUN_SPECIFIC}


def end_state() -> dict:
    return {
        "coupons": sorted(UserCoupon.objects.values_list("user_id", "status", "state_version")),
        "inbox": [(m.message_id, m.fact_type, m.order_id, m.sender_scope, stripped(m.outcome))
                  for m in InboxMessage.objects.order_by("received_at", "message_id")],
        "ledger": sorted(CouponOperation.objects.values_list(
            "coupon__user_id", "to_version", "op_type", "to_state", "actor", "order_id",
            "payment_id")),
        "cases": sorted(ConflictCase.objects.values_list(
            "coupon__user_id", "order_id", "fact_type", "status", "recommendation")),
        "events": sorted(OutboxEvent.objects.values_list(
            "coupon__user_id", "event_type", "payload__state_version")),
    }


class RolledBack(Exception):
    pass


def test_consumer_ends_where_post_events_ends_and_dead_letters_the_poison(
    coupons, clock, api, service_client, facts_broker, make_consumer
):
    bodies = story(clock)
    statuses = []
    with pytest.raises(RolledBack), transaction.atomic():
        for body in bodies:
            response = api.generic("POST", "/api/v1/events", body,
                                   content_type="application/json")
            statuses.append(response.status_code)
        over_http = end_state()
        raise RolledBack
    assert statuses == [202] * 9 + [400, 400, 400, 422, 400]

    for body in bodies:
        facts_broker.publish(body)
    report = make_consumer(service_client[0]).run(once=True)
    over_broker = end_state()

    assert report.counts == {"PROCESSED": 8, "DUPLICATE": 1, "DEAD_LETTERED": 5}
    assert over_broker == over_http
    assert over_broker["coupons"] == [
        ("u1", "USED", 3), ("u2", "AVAILABLE", 3), ("u3", "AVAILABLE", 1),
        ("u4", "AVAILABLE", 3),
    ]
    assert over_broker["cases"] == [
        ("u4", "O4", "PaymentSucceeded", "OPEN", "COMPENSATING_REDEEM")]
    letters = facts_broker.dead_letters()
    assert [letter["headers"]["dead_letter_code"] for letter in letters] == POISON_CODES
    assert [letter["body"] for letter in letters] == [bodies[i] for i in (9, 10, 11, 12, 13)]
    assert letters[2]["details"] == {"payload": {"coupon_id": ["This field is required."]}}
    assert letters[3]["details"] == {"message_id": "m1"}
    assert facts_broker.waiting() == 0


def test_redelivered_queue_changes_nothing_twice(
    coupons, clock, service_client, facts_broker, make_consumer
):
    for body in story(clock)[:9]:
        facts_broker.publish(body)
    make_consumer(service_client[0]).run(once=True)
    first = end_state()
    for body in story(clock)[:9]:  # the sender's retry of everything
        facts_broker.publish(body)

    report = make_consumer(service_client[0]).run(once=True)

    assert report.counts == {"DUPLICATE": 9}
    assert end_state() == first


def test_a_fact_the_client_may_not_send_is_dead_lettered(clock, facts_broker, make_consumer):
    refunds, _ = service_client_create(name="refund-service", fact_types=["RefundSucceeded"])
    facts_broker.publish(event_body("m1", "PaymentSucceeded", clock.now(), order_id="O1",
                                    payment_id="P1"))

    report = make_consumer(refunds).run(once=True)

    assert report.counts == {"DEAD_LETTERED": 1}
    assert not InboxMessage.objects.exists()
    [letter] = facts_broker.dead_letters()
    assert letter["headers"]["dead_letter_code"] == "PERMISSION_DENIED"
    assert letter["details"] == {"capability": "post_facts", "fact_type": "PaymentSucceeded"}


def test_a_message_claiming_another_sender_is_dead_lettered_not_reattributed(
    clock, service_client, facts_broker, make_consumer
):
    facts_broker.publish(event_body("m1", "OrderClosed", clock.now(), order_id="O1"),
                         headers={"sender": "payment-service"})

    make_consumer(service_client[0]).run(once=True)

    assert not InboxMessage.objects.exists()
    [letter] = facts_broker.dead_letters()
    assert letter["headers"]["dead_letter_code"] == "SENDER_MISMATCH"
    assert letter["headers"]["sender"] == "payment-service"


# Transactional: after a database error the consumer drops its connection, as a real one must.
@pytest.mark.django_db(transaction=True)
def test_the_database_down_leaves_the_message_queued_and_it_is_retried(
    coupons, clock, service_client, facts_broker, make_consumer, monkeypatch
):
    real = facts_consumer.fact_receive

    def unreachable(**kwargs):
        raise OperationalError("connection refused")

    facts_broker.publish(story(clock)[0])
    monkeypatch.setattr(facts_consumer, "fact_receive", unreachable)
    report = make_consumer(service_client[0]).run(once=True)
    assert report.counts == {"RETRY": 1}
    assert facts_broker.waiting() == 1
    assert facts_broker.dead_letters() == []

    monkeypatch.setattr(facts_consumer, "fact_receive", real)
    report = make_consumer(service_client[0]).run(once=True)

    assert report.counts == {"PROCESSED": 1}
    assert UserCoupon.objects.get(user_id="u1").status == "USED"


def test_once_command_reports_and_fails_on_a_retry(
    clock, service_client, facts_broker, capsys, monkeypatch
):
    options = ["--client", "order-service", "--exchange", facts_broker.exchange,
               "--queue", facts_broker.queue]
    facts_broker.publish(b"nope")
    call_command("consume_facts", "--once", *options)
    assert capsys.readouterr().out.strip() == "consumed: dead_lettered 1"

    facts_broker.publish(event_body("m1", "OrderClosed", clock.now(), order_id="O1"))
    monkeypatch.setattr(facts_consumer, "fact_receive",
                        lambda **kw: (_ for _ in ()).throw(OperationalError("down")))
    with pytest.raises(CommandError, match="retry 1; a message was put back"):
        call_command("consume_facts", "--once", *options)


def test_command_needs_an_active_client(db):
    with pytest.raises(CommandError, match="No active service client named 'ghost'"):
        call_command("consume_facts", "--once", "--client", "ghost")


def test_dead_letter_details_are_json(clock, service_client, facts_broker, make_consumer):
    facts_broker.publish(event_body("m1", "OrderClosed", clock.now()))

    make_consumer(service_client[0]).run(once=True)

    [letter] = facts_broker.dead_letters()
    assert json.loads(letter["headers"]["dead_letter_details"]) == {
        "payload": {"order_id": ["This field is required."]}}


def test_metrics_port_serves_the_consumers_counters_on_localhost(
    clock, service_client, facts_broker
):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    facts_broker.publish(b"nope")

    call_command("consume_facts", "--once", "--client", "order-service", "--metrics-port",
                 str(port), "--exchange", facts_broker.exchange, "--queue", facts_broker.queue)

    page = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    assert 'coupons_facts_consumed_total{outcome="DEAD_LETTERED"}' in page


def status_of(user_id: str) -> str:
    return UserCoupon.objects.get(user_id=user_id).status


@pytest.mark.django_db(transaction=True)
def test_the_long_running_consumer_takes_facts_as_they_come_until_stopped(
    coupons, clock, service_client, facts_broker, make_consumer
):
    consumer, stop = make_consumer(service_client[0]), threading.Event()
    loop = threading.Thread(target=lambda: (facts_consumer.run_forever(consumer, stop=stop),
                                            connection.close()))
    loop.start()
    try:
        time.sleep(0.3)  # real time: the consumer is waiting on the empty queue
        facts_broker.publish(story(clock)[0])
        deadline = time.monotonic() + 10
        while status_of("u1") != "USED":
            assert time.monotonic() < deadline, "the fact was not consumed"
            time.sleep(0.1)
    finally:
        stop.set()
        loop.join(10)
    assert not loop.is_alive()
    assert list(InboxMessage.objects.values_list("message_id", "outcome__action")) == [
        ("m1", "REDEEMED")]


def test_back_off_doubles_per_retry_in_a_row_up_to_the_ceiling():
    assert [retry_delay(n) for n in (1, 2, 3, 7, 20)] == [0.5, 1.0, 2.0, 30.0, 30.0]


def test_one_message_id_over_http_and_the_broker_is_one_fact(
    coupons, clock, api, service_client, facts_broker, make_consumer
):
    body = story(clock)[0]
    assert api.generic("POST", "/api/v1/events", body,
                       content_type="application/json").json()["status"] == "PROCESSED"
    facts_broker.publish(body)

    report = make_consumer(service_client[0]).run(once=True)

    assert report.counts == {"DUPLICATE": 1}
    assert InboxMessage.objects.count() == 1


def test_a_deactivated_clients_messages_wait_in_the_queue(
    clock, service_client, facts_broker, make_consumer
):
    client = service_client[0]
    consumer = make_consumer(client)
    client.is_active = False
    client.save(update_fields=["is_active"])
    facts_broker.publish(event_body("m1", "OrderClosed", clock.now(), order_id="O1"))

    report = consumer.run(once=True)

    assert report.counts == {"RETRY": 1}
    assert facts_broker.waiting() == 1 and facts_broker.dead_letters() == []
    assert not InboxMessage.objects.exists()


def test_a_body_larger_than_post_events_accepts_is_dead_lettered(
    clock, service_client, facts_broker, make_consumer, settings
):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    body = event_body("m1", "OrderClosed", clock.now(), order_id="O" * 60)
    facts_broker.publish(body)

    make_consumer(service_client[0]).run(once=True)

    [letter] = facts_broker.dead_letters()
    assert letter["details"] == {"size": len(body), "limit": 100}
    assert not InboxMessage.objects.exists()

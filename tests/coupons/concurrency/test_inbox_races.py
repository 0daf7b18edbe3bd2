"""One payment delivered many times at once, on PostgreSQL with real threads and connections.

The inbox de-duplicates by (sender, message_id) in the transaction of the fact's effects: a
second insert of a sender's message id waits on the first's unique-index entry, then fails and
answers DUPLICATE. A retry under a new message id stores no second fact, and the redeem it
drives finds the coupon already USED by the same order.
"""

from collections import Counter

import pytest
from rest_framework.test import APIClient

from coupons.evidence.replay import coupon_check
from coupons.models import CouponOperation, InboxMessage, OrderFact, Redemption, UserCoupon
from coupons.services import service_client_create
from tests.conftest import lock
from tests.coupons.concurrency.threads import all_ok, race

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 16


def post_at_once(key, bodies):
    """POST each body to the inbox from its own client, all at once; answers
    [(status code, json)]."""

    return all_ok(race(*[lambda body=body: post_once(key, body) for body in bodies]))


def payment(clock, message_id, order_id="order-A", payment_id="P-A"):
    return {"message_id": message_id, "type": "PaymentSucceeded",
            "occurred_at": clock.now().isoformat(),
            "payload": {"order_id": order_id, "payment_id": payment_id}}


def assert_redeemed_once(coupon, facts=1):
    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("USED", 3)
    redemption = Redemption.objects.get()
    assert (redemption.coupon_id, redemption.order_id, redemption.payment_id) == (
        coupon.pk, "order-A", "P-A",
    )
    assert CouponOperation.objects.filter(coupon=coupon, op_type="REDEEM").count() == 1
    assert OrderFact.objects.count() == facts
    assert coupon_check(UserCoupon.objects.get(pk=coupon.pk)).ok


def test_same_message_sixteen_times_at_once_is_processed_exactly_once(
    coupon, ctx, clock, service_client,
):
    lock(coupon, ctx, order_id="order-A")

    answers = post_at_once(service_client[1], [payment(clock, "pay-A-1")] * THREADS)

    assert [code for code, _ in answers] == [202] * THREADS
    assert Counter(body["status"] for _, body in answers) == {
        "PROCESSED": 1, "DUPLICATE": THREADS - 1,
    }
    first = next(body["outcome"] for _, body in answers if body["status"] == "PROCESSED")
    assert first["action"] == "REDEEMED"
    # every duplicate answers the first delivery's outcome
    assert all(body["outcome"] == first for _, body in answers)
    assert InboxMessage.objects.count() == 1
    assert_redeemed_once(coupon)


def test_same_payment_under_sixteen_message_ids_at_once_redeems_once(
    coupon, ctx, clock, service_client,
):
    lock(coupon, ctx, order_id="order-A")
    bodies = [payment(clock, f"pay-A-retry-{i}") for i in range(THREADS)]

    answers = post_at_once(service_client[1], bodies)

    assert [code for code, _ in answers] == [202] * THREADS
    assert {body["status"] for _, body in answers} == {"PROCESSED"}
    actions = Counter(body["outcome"]["action"] for _, body in answers)
    assert actions == {"REDEEMED": 1, "ALREADY_REDEEMED": THREADS - 1}
    assert sum(not body["outcome"]["repeated_fact"] for _, body in answers) == 1
    assert InboxMessage.objects.count() == THREADS
    assert_redeemed_once(coupon)


def test_one_message_id_from_two_senders_at_once_is_two_messages(
    coupon, ctx, clock, service_client,
):
    """Per-sender de-dup under contention: client X's PaymentFailed and the order service's
    PaymentSucceeded share a message id; each is processed once, neither shadows the other."""
    lock(coupon, ctx, order_id="order-A")
    x_key = service_client_create(name="client-x", fact_types=["PaymentFailed"])[1]
    failed = {**payment(clock, "pay-A-1", order_id="order-X"), "type": "PaymentFailed"}
    del failed["payload"]["payment_id"]
    half = THREADS // 2

    answers = all_ok(race(
        *[lambda: post_once(service_client[1], payment(clock, "pay-A-1"))] * half,
        *[lambda: post_once(x_key, failed)] * half,
    ))

    assert [code for code, _ in answers] == [202] * THREADS
    for sent in (answers[:half], answers[half:]):
        assert Counter(body["status"] for _, body in sent) == {"PROCESSED": 1,
                                                               "DUPLICATE": half - 1}
    assert InboxMessage.objects.count() == 2
    assert_redeemed_once(coupon, facts=2)  # order-A's payment, order-X's failure


def post_once(key, body):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.post("/api/v1/events", body, format="json")
    return response.status_code, response.json()

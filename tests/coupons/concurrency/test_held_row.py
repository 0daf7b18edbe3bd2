"""A coupon row held by a stuck session costs its own commands a bounded wait, no one else's.

Before: commands set no lock_timeout. A session idle in a transaction holding one coupon's row
held every command on it for as long as it lived, each one a server thread: ten LOCKs of that
coupon filled a server's threads and a LOCK of another coupon got no answer either.
"""

import contextlib
import uuid

import psycopg
import pytest
from django.db import connection
from rest_framework.test import APIClient

from coupons.models import (
    CommandRejection,
    ConflictCase,
    CouponOperation,
    InboxMessage,
    UserCoupon,
)
from coupons.services import coupon_issue
from tests.coupons.concurrency.threads import race

pytestmark = pytest.mark.django_db(transaction=True)

ORDER = {"order_id": "order-A", "user_id": "u1", "order_amount": "300.00"}


@contextlib.contextmanager
def row_held(coupon_id: int):
    """Another session takes the coupon's row and sits idle in its transaction."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    with psycopg.connect(**params) as holder:
        holder.execute(f"SELECT 1 FROM {UserCoupon._meta.db_table} WHERE id = %s FOR UPDATE",
                       [coupon_id])
        try:
            yield
        finally:
            holder.rollback()


def lock_call(key: str, coupon_id: int, idempotency_key: str | None = None):
    def call():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        answer = client.post(f"/api/v1/coupons/{coupon_id}/lock", ORDER, format="json",
                             HTTP_IDEMPOTENCY_KEY=idempotency_key or str(uuid.uuid4()))
        return answer.status_code, answer.json(), answer.get("Retry-After")
    return call


@pytest.fixture
def short_waits(settings):
    settings.COUPONS = {**settings.COUPONS, "COMMAND_LOCK_TIMEOUT_MS": 300}


def test_commands_on_a_held_row_answer_coupon_busy_while_other_coupons_are_served(
    service_client, coupon, template, ctx, short_waits,
):
    key = service_client[1]
    others = [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon.pk
              for _ in range(20)]

    with row_held(coupon.pk):
        outcomes = race(*[lock_call(key, coupon.pk) for _ in range(4)],
                        *[lock_call(key, other) for other in others])

    answers = [value for _, value in outcomes]
    busy, served = answers[:4], answers[4:]
    assert [(status, body["error"]["code"], retry_after) for status, body, retry_after in busy] \
        == [(409, "COUPON_BUSY", "1")] * 4
    assert [status for status, _, _ in served] == [200] * 20
    assert CommandRejection.objects.filter(
        error_code="COUPON_BUSY", coupon_id_ref=coupon.pk, op_type="LOCK").count() == 4
    assert not CouponOperation.objects.filter(coupon_id=coupon.pk, op_type="LOCK").exists()


def test_a_busy_answer_leaves_the_idempotency_key_free_for_the_retry(
    service_client, coupon, short_waits,
):
    key = service_client[1]
    with row_held(coupon.pk):
        status, body, _ = lock_call(key, coupon.pk, "lock-once")()
    assert (status, body["error"]["code"]) == (409, "COUPON_BUSY")

    status, body, _ = lock_call(key, coupon.pk, "lock-once")()

    assert (status, body["status"]) == (200, "LOCKED")


def test_a_fact_about_a_held_coupon_is_answered_busy_and_taken_whole_on_its_retry(
    service_client, coupon, clock, short_waits,
):
    key = service_client[1]
    assert lock_call(key, coupon.pk)()[0] == 200
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    # A handler that turns a refused redeem into a conflict case must not take busy for refused.
    fact = {"message_id": "paid-1", "type": "PaymentSucceeded",
            "occurred_at": clock.now().isoformat(),
            "payload": {"order_id": "order-A", "payment_id": "P1"}}

    with row_held(coupon.pk):
        busy = client.post("/api/v1/events", fact, format="json")
    assert (busy.status_code, busy.json()["error"]["code"]) == (409, "COUPON_BUSY")
    assert not InboxMessage.objects.exists()  # no conflict case, no recorded outcome
    assert not ConflictCase.objects.exists()

    retried = client.post("/api/v1/events", fact, format="json")

    assert (retried.status_code, retried.json()["status"]) == (202, "PROCESSED")
    assert retried.json()["outcome"]["action"] == "REDEEMED"

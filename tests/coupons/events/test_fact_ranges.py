"""A fact either takes effect, is refused with an error (docs/api.md), or is a duplicate: never a
500.

The issue's reproduction: DepositPaid with final_payment_deadline 9999-12-31 raised
OverflowError (deadline + grace) and answered an HTML 500 on every redelivery.
"""

from datetime import timedelta

import pytest

from coupons.models import ConflictCase, InboxMessage, OrderFact
from tests.command_checks import world
from tests.conftest import START

pytestmark = pytest.mark.django_db

WINDOW = timedelta(days=5 * 366)  # settings.COUPONS["FACT_TIME_WINDOW_DAYS"]


def deposit(send, coupon, deadline, **kwargs):
    return send("DepositPaid", order_id="PS-1", coupon_id=coupon.pk, user_id=coupon.user_id,
                order_amount="300.00", final_payment_deadline=deadline, **kwargs)


def recorded() -> tuple:
    return (world(), InboxMessage.objects.count(), OrderFact.objects.count(),
            ConflictCase.objects.count())


def test_a_far_future_deadline_is_400_on_every_delivery_and_records_nothing(coupon, send):
    before = recorded()

    for _ in range(2):  # the sender redelivers
        answer = deposit(send, coupon, "9999-12-31T23:59:59Z", message_id="dep-1", expect=400)
        assert answer["error"]["code"] == "VALIDATION_ERROR"
        assert "final_payment_deadline" in answer["error"]["details"]["payload"]
        assert recorded() == before

    # the message id was not used up: the corrected fact goes through
    fixed = deposit(send, coupon, (START + timedelta(days=14)).isoformat(), message_id="dep-1")
    assert (fixed["status"], fixed["outcome"]["action"]) == ("PROCESSED", "LOCKED")


@pytest.mark.parametrize("deadline", [
    "0001-01-01T00:00:00+05:00",  # before year 1 in UTC
    "9999-12-31T23:59:59-05:00",  # after year 9999 in UTC
    (START + WINDOW + timedelta(seconds=1)).isoformat(),
    (START - WINDOW - timedelta(seconds=1)).isoformat(),
])
def test_deadlines_out_of_range_are_400(coupon, send, deadline):
    answer = deposit(send, coupon, deadline, expect=400)

    assert "final_payment_deadline" in answer["error"]["details"]["payload"]


@pytest.mark.parametrize("occurred_at", [START + WINDOW + timedelta(days=1),
                                         START - WINDOW - timedelta(days=1)])
def test_a_fact_that_occurred_out_of_range_is_400(coupon, send, occurred_at):
    before = recorded()

    answer = send("OrderClosed", occurred_at=occurred_at, expect=400, order_id="A")

    assert "occurred_at" in answer["error"]["details"]
    assert recorded() == before


def test_a_deadline_in_range_but_past_the_longest_lease_is_a_recorded_refusal(coupon, send):
    """Within the window it is a fact about the order; the coupon refusing so long a lease is
    the coupon's answer, recorded like any other (a case for a person), not an error."""
    answer = deposit(send, coupon, (START + WINDOW - timedelta(days=1)).isoformat())

    assert answer["status"] == "PROCESSED"
    assert (answer["outcome"]["action"], answer["outcome"]["error_code"]) == (
        "CASE_OPENED", "VALIDATION_ERROR",
    )
    coupon.refresh_from_db()
    assert coupon.status == "AVAILABLE"


@pytest.mark.parametrize(("field", "value"), [
    ("order_amount", "1" * 11 + ".00"),  # more than 12 digits
    ("order_amount", "0.00"),
    ("coupon_id", 2**63),
    ("user_id", "u" * 65),
    ("order_id", "o" * 65),
])
def test_deposit_amounts_and_ids_are_bounded(coupon, send, field, value):
    payload = {"order_id": "PS-1", "coupon_id": coupon.pk, "user_id": coupon.user_id,
               "order_amount": "300.00",
               "final_payment_deadline": (START + timedelta(days=14)).isoformat(), field: value}

    answer = send("DepositPaid", expect=400, **payload)

    assert field in answer["error"]["details"]["payload"]


def test_a_message_id_is_bounded(coupon, send):
    answer = send("OrderClosed", message_id="m" * 129, expect=400, order_id="A")

    assert "message_id" in answer["error"]["details"]

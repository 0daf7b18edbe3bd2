"""The coordinator: what each fact does to the coupon, and the case it opens when the coupon
cannot follow (docs/events.md; a late payment after release)."""

from datetime import timedelta

import pytest

from coupons.events.facts import stored_lease
from coupons.models import (
    ConflictCase,
    CouponLock,
    InboxMessage,
    OrderFact,
    Redemption,
    UserCoupon,
)
from coupons.services import CommandContext, coupon_release, coupon_void
from tests.command_checks import ledger, world
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db

VALID_UNTIL = START + timedelta(days=30)  # the `template` fixture's valid_days


def status_of(coupon) -> tuple:
    coupon.refresh_from_db()
    return coupon.status, coupon.state_version


# --- PaymentSucceeded ---------------------------------------------------------------------


def test_payment_succeeded_redeems_the_orders_lease(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")

    outcome = send("PaymentSucceeded", order_id="A", payment_id="P-A")["outcome"]

    redemption = Redemption.objects.get()
    assert outcome == {"action": "REDEEMED", "coupon_id": coupon.pk,
                       "redemption_id": redemption.pk, "state_version": 3,
                       "repeated_fact": False}
    assert (redemption.order_id, redemption.payment_id) == ("A", "P-A")
    assert ledger(coupon)[-1] == ("REDEEM", "LOCKED", "USED", 2, 3)


def test_payment_redelivered_with_a_new_message_id_answers_already_redeemed(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    first = send("PaymentSucceeded", order_id="A", payment_id="P-A")["outcome"]
    before = world()

    again = send("PaymentSucceeded", order_id="A", payment_id="P-A")

    assert again["status"] == "PROCESSED"
    outcome = again["outcome"]
    assert (outcome["action"], outcome["repeated_fact"]) == ("ALREADY_REDEEMED", True)
    assert outcome["redemption_id"] == first["redemption_id"]
    assert world() == before
    assert OrderFact.objects.filter(fact_type="PaymentSucceeded").count() == 1
    assert InboxMessage.objects.filter(fact_type="PaymentSucceeded").count() == 2


@pytest.mark.parametrize(("fact_type", "payload"), [
    ("PaymentSucceeded", {"payment_id": "P-X"}),
    ("FinalPaymentSucceeded", {"payment_id": "P-X"}),
    ("PaymentFailed", {}),
    ("OrderClosed", {}),
])
def test_fact_for_an_order_without_a_coupon_answers_no_coupon(
    coupon, ctx, send, fact_type, payload,
):
    lock(coupon, ctx, order_id="A")
    before = world()

    outcome = send(fact_type, order_id="NO-COUPON-ORDER", **payload)["outcome"]

    assert outcome["action"] == "NO_COUPON"
    assert world() == before
    assert not ConflictCase.objects.exists()


# --- PaymentFailed / OrderClosed ----------------------------------------------------------


@pytest.mark.parametrize("fact_type", ["PaymentFailed", "OrderClosed"])
def test_order_ended_releases_the_coupon(coupon, ctx, send, fact_type):
    lock(coupon, ctx, order_id="A")

    outcome = send(fact_type, order_id="A")["outcome"]

    assert outcome == {"action": "RELEASED", "coupon_id": coupon.pk, "status": "AVAILABLE",
                       "state_version": 3, "repeated_fact": False}
    assert ledger(coupon)[-1] == ("RELEASE", "LOCKED", "AVAILABLE", 2, 3)
    assert CouponLock.objects.get().status == "RELEASED"


def test_order_closed_past_valid_until_releases_to_expired(coupon, ctx, clock, send):
    lock(coupon, ctx, order_id="A", lease_until=VALID_UNTIL + timedelta(days=2))
    clock.set(VALID_UNTIL + timedelta(hours=1))

    outcome = send("OrderClosed", order_id="A")["outcome"]

    assert (outcome["action"], outcome["status"]) == ("RELEASED", "EXPIRED")


@pytest.mark.parametrize("fact_type", ["PaymentFailed", "OrderClosed"])
def test_order_ended_after_its_payment_is_ignored(coupon, ctx, send, fact_type):
    lock(coupon, ctx, order_id="A")
    send("PaymentSucceeded", order_id="A", payment_id="P-A")
    before = world()

    outcome = send(fact_type, order_id="A")["outcome"]

    assert outcome["action"] == "IGNORED"
    assert world() == before
    assert status_of(coupon) == ("USED", 3)


def test_order_ended_twice_has_nothing_to_release(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    send("PaymentFailed", order_id="A")
    before = world()

    outcome = send("OrderClosed", order_id="A")["outcome"]

    assert outcome == {"action": "NOTHING_TO_RELEASE", "coupon_id": coupon.pk,
                       "lock_status": "RELEASED", "repeated_fact": False}
    assert world() == before


def test_order_closed_never_releases_a_newer_lease_of_another_order(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    send("OrderClosed", order_id="A")
    lock(coupon, ctx, order_id="B")
    before = world()

    outcome = send("OrderClosed", order_id="A")["outcome"]

    assert outcome["action"] == "NOTHING_TO_RELEASE"
    assert world() == before
    coupon.refresh_from_db()
    assert (coupon.status, coupon.locked_order_id) == ("LOCKED", "B")


# --- DepositPaid and RefundSucceeded ------------------------------------------------------


@pytest.mark.parametrize(("payload", "error_code"), [
    ({"user_id": "someone-else"}, "NOT_COUPON_OWNER"),
    ({"order_amount": "199.99"}, "THRESHOLD_NOT_MET"),
    ({"final_payment_deadline": (START - timedelta(days=1)).isoformat()}, "VALIDATION_ERROR"),
])
def test_a_deposit_the_coupon_refuses_opens_a_case_for_a_person(coupon, send, payload,
                                                                error_code):
    """The order service counts on the discount: the refusal is a case, never silence. The
    deposit named a coupon the order could never have: no remedy but a person's."""
    before = world()
    body = {"order_id": "PS-1", "coupon_id": coupon.pk, "user_id": "u1",
            "order_amount": "300.00",
            "final_payment_deadline": (START + timedelta(days=7)).isoformat(), **payload}

    outcome = send("DepositPaid", **body)["outcome"]

    assert (outcome["action"], outcome["coupon_id"]) == ("CASE_OPENED", coupon.pk)
    assert (outcome["error_code"], outcome["recommendation"]) == (error_code, "MANUAL_REVIEW")
    case = ConflictCase.objects.get(pk=outcome["case_id"])
    assert (case.order_id, case.fact_type, case.evidence["refused_with"]) == (
        "PS-1", "DepositPaid", error_code)
    assert world() == before


def test_a_deposit_naming_no_coupon_of_ours_answers_lock_refused(send):
    outcome = send("DepositPaid", order_id="PS-1", coupon_id=999_999, user_id="u1",
                   order_amount="300.00",
                   final_payment_deadline=(START + timedelta(days=7)).isoformat())["outcome"]

    assert (outcome["action"], outcome["error_code"]) == ("LOCK_REFUSED", "NOT_FOUND")
    assert not ConflictCase.objects.exists()


def test_deposit_after_valid_until_answers_lock_refused(coupon, clock, send):
    clock.set(VALID_UNTIL)

    outcome = send("DepositPaid", order_id="PS-1", coupon_id=coupon.pk, user_id="u1",
                   order_amount="300.00",
                   final_payment_deadline=(VALID_UNTIL + timedelta(days=3)).isoformat())
    assert (outcome["outcome"]["action"], outcome["outcome"]["error_code"]) == (
        "CASE_OPENED", "COUPON_EXPIRED",
    )
    assert status_of(coupon) == ("AVAILABLE", 1)


def test_deposit_of_an_order_closed_earlier_is_ignored(coupon, send):
    """Facts arrive in any order: a close that overtook its deposit keeps the coupon free."""
    send("OrderClosed", order_id="PS-1")

    outcome = send("DepositPaid", order_id="PS-1", coupon_id=coupon.pk, user_id="u1",
                   order_amount="300.00",
                   final_payment_deadline=(START + timedelta(days=7)).isoformat())["outcome"]

    assert outcome["action"] == "IGNORED"
    assert status_of(coupon) == ("AVAILABLE", 1)


def test_refund_succeeded_is_stored_and_decided_by_the_refund_service(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    send("PaymentSucceeded", order_id="A", payment_id="P-A")

    answer = send("RefundSucceeded", order_id="A", payment_id="P-A", refund_id="R-1",
                  refund_amount="270.00", refund_type="FULL")

    # tests/refunds/ covers the decisions; here: the fact reaches the same service.
    [decision] = answer["outcome"]["decisions"]
    assert (answer["outcome"]["action"], decision["action"]) == ("REFUND_DECIDED", "RETURN")
    coupon.refresh_from_db()
    assert coupon.status == "AVAILABLE"
    fact = OrderFact.objects.get(fact_type="RefundSucceeded")
    assert (fact.order_id, fact.payment_id, fact.refund_id) == ("A", "P-A", "R-1")
    assert fact.payload["refund_amount"] == "270.00"


# --- conflict cases and their recommendations ---------------------------------------------


def test_payment_after_its_order_released_the_coupon_recommends_a_compensating_redeem(
    coupon, ctx, send,
):
    lock(coupon, ctx, order_id="A")
    send("OrderClosed", order_id="A")

    outcome = send("PaymentSucceeded", order_id="A", payment_id="P-A")["outcome"]

    assert outcome["action"] == "CASE_OPENED"
    assert outcome["recommendation"] == "COMPENSATING_REDEEM"
    assert outcome["error_code"] == "INVALID_STATE"
    assert status_of(coupon) == ("AVAILABLE", 3)  # the coordinator never forces a state
    assert not Redemption.objects.exists()
    case = ConflictCase.objects.get(pk=outcome["case_id"])
    assert (case.coupon, case.order_id, case.payment_id, case.fact_type, case.status) == (
        coupon, "A", "P-A", "PaymentSucceeded", "OPEN",
    )
    assert case.evidence["coupon_state"] == "AVAILABLE"
    assert case.evidence["refused_with"] == "INVALID_STATE"
    assert case.evidence["order_discount"] == "30.00"


def _b_holds(coupon, ctx, send):
    lock(coupon, ctx, order_id="B")


def _b_used(coupon, ctx, send):
    lock(coupon, ctx, order_id="B")
    send("PaymentSucceeded", order_id="B", payment_id="P-B")


@pytest.mark.parametrize("b_takes_it", [_b_holds, _b_used], ids=["B_holds", "B_used"])
def test_late_payment_when_another_order_took_the_coupon_recommends_a_discount_refund(
    coupon, ctx, send, b_takes_it,
):
    lock(coupon, ctx, order_id="A")
    send("OrderClosed", order_id="A")
    b_takes_it(coupon, ctx, send)
    before = world()

    outcome = send("PaymentSucceeded", order_id="A", payment_id="P-A")["outcome"]

    assert outcome["action"] == "CASE_OPENED"
    assert outcome["recommendation"] == "ORDER_DISCOUNT_REFUND"
    case = ConflictCase.objects.get(pk=outcome["case_id"])
    assert "Order B" in case.summary
    assert world() == before


def _voided(coupon, ctx, clock):
    coupon.refresh_from_db()
    coupon_void(coupon_id=coupon.pk, expected_version=coupon.state_version,
                reason="campaign closed", ctx=ctx)


def _expired_on_release(coupon, ctx, clock):
    pass  # the order closed past valid_until, so its release ended EXPIRED


def _valid_until_passed_since(coupon, ctx, clock):
    clock.set(VALID_UNTIL + timedelta(days=1))  # AVAILABLE, but no order can lock it now


@pytest.mark.parametrize(("close_at", "then", "coupon_status"), [
    (START, _voided, "VOID"),
    (VALID_UNTIL, _expired_on_release, "EXPIRED"),
    (START, _valid_until_passed_since, "AVAILABLE"),
], ids=["voided", "expired", "past_valid_until"])
def test_late_payment_for_a_coupon_out_of_use_recommends_manual_review(
    coupon, ctx, clock, send, close_at, then, coupon_status,
):
    lock(coupon, ctx, order_id="A", lease_until=VALID_UNTIL + timedelta(days=2))
    clock.set(close_at)
    send("OrderClosed", order_id="A")
    then(coupon, ctx, clock)

    outcome = send("PaymentSucceeded", order_id="A", payment_id="P-A")["outcome"]

    assert (outcome["action"], outcome["recommendation"]) == ("CASE_OPENED", "MANUAL_REVIEW")
    assert status_of(coupon)[0] == coupon_status
    assert coupon_status in ConflictCase.objects.get().summary


def test_repeated_fact_with_a_new_message_id_joins_the_open_case(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    send("OrderClosed", order_id="A")
    first = send("PaymentSucceeded", order_id="A", payment_id="P-A")["outcome"]

    again = send("PaymentSucceeded", order_id="A", payment_id="P-A")["outcome"]
    retried = send("PaymentSucceeded", order_id="A", payment_id="P-A-retry")["outcome"]

    assert again["case_id"] == retried["case_id"] == first["case_id"]
    assert (again["repeated_fact"], retried["repeated_fact"]) == (True, False)
    assert ConflictCase.objects.count() == 1
    assert status_of(coupon) == ("AVAILABLE", 3)


def test_final_payment_after_its_presale_order_released_the_coupon_opens_a_case(
    coupon, send,
):
    send("DepositPaid", order_id="PS-1", coupon_id=coupon.pk, user_id="u1",
         order_amount="300.00", final_payment_deadline=(START + timedelta(days=7)).isoformat())
    binding_lock = CouponLock.objects.get()
    # Released behind the order's back (an operator, say): the final payment finds it free.
    coupon_release(coupon_id=coupon.pk, lease=stored_lease(binding_lock),
                   ctx=CommandContext(actor="system:lease-scanner"), reason="lease ended")

    outcome = send("FinalPaymentSucceeded", order_id="PS-1", payment_id="FP-1")["outcome"]

    assert (outcome["action"], outcome["recommendation"]) == (
        "CASE_OPENED", "COMPENSATING_REDEEM",
    )
    assert ConflictCase.objects.get().fact_type == "FinalPaymentSucceeded"


# --- the event API refuses malformed facts ------------------------------------------------


def _counts() -> tuple:
    return (InboxMessage.objects.count(), OrderFact.objects.count(),
            ConflictCase.objects.count(), UserCoupon.objects.count())


@pytest.mark.parametrize(("fact_type", "payload", "bad_field"), [
    ("PaymentSucceeded", {"payment_id": "P-A"}, ("payload", "order_id")),
    ("OrderClosed", {"order_id": ""}, ("payload", "order_id")),
    ("CouponStolen", {"order_id": "A"}, ("type",)),
    ("DepositPaid", {"order_id": "A", "coupon_id": 1, "user_id": "u1", "order_amount": "lots",
                     "final_payment_deadline": "2026-06-10T12:00:00Z"},
     ("payload", "order_amount")),
    ("DepositPaid", {"order_id": "A", "coupon_id": 1, "user_id": "u1", "order_amount": "-5.00",
                     "final_payment_deadline": "2026-06-10T12:00:00Z"},
     ("payload", "order_amount")),
    ("RefundSucceeded", {"order_id": "A", "payment_id": "P-A", "refund_id": "R-1",
                         "refund_amount": "1.005", "refund_type": "FULL"},
     ("payload", "refund_amount")),
], ids=["missing_order_id", "blank_order_id", "unknown_type", "amount_not_a_number",
        "negative_amount", "amount_below_a_cent"])
def test_event_api_refuses_a_malformed_fact_and_stores_nothing(
    coupon, ctx, send, fact_type, payload, bad_field,
):
    lock(coupon, ctx, order_id="A")
    before, counts = world(), _counts()

    answer = send(fact_type, message_id="bad-1", expect=400, **payload)

    assert answer["error"]["code"] == "VALIDATION_ERROR"
    details = answer["error"]["details"]
    for key in bad_field:
        assert key in details, details
        details = details[key]
    assert (world(), _counts()) == (before, counts)


def test_a_refused_message_id_can_be_sent_again_once_it_is_well_formed(coupon, ctx, send):
    lock(coupon, ctx, order_id="A")
    send("PaymentSucceeded", message_id="m-retry", expect=400, order_id="A")

    answer = send("PaymentSucceeded", message_id="m-retry", order_id="A", payment_id="P-A")

    assert (answer["status"], answer["outcome"]["action"]) == ("PROCESSED", "REDEEMED")

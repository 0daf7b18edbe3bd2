import hashlib
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.conf import settings

from coupons.models import CommandRejection, CouponLock, CouponOperation, OrderCoupon, OutboxEvent
from coupons.services import (
    coupon_expire,
    coupon_issue,
    coupon_lock,
    coupon_redeem,
    coupon_release,
    coupon_void,
    template_create,
)
from tests.command_checks import events, ledger, refused
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db


def issue(ctx, user_id="u1", **terms):
    """A coupon of a fresh template with the given terms (valid 30 days unless told)."""
    terms = {"code": "t", "name": "t", "kind": "AMOUNT_OFF", "face_value": Decimal("30.00"),
             **terms}
    if "valid_until" not in terms:
        terms.setdefault("valid_days", 30)
    template = template_create(**terms)
    return coupon_issue(template_id=template.pk, user_id=user_id, ctx=ctx).coupon


def lock_as(coupon, ctx, *, user_id="u1", order_id="order-A", amount="300.00", **kwargs):
    return coupon_lock(coupon_id=coupon.pk, order_id=order_id, user_id=user_id,
                       order_amount=Decimal(amount), ctx=ctx, **kwargs)


# --- happy path ---------------------------------------------------------------------------


def test_lock_binds_the_coupon_to_the_order(coupon, ctx):
    result, _ = lock(coupon, ctx, order_id="order-A")

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("LOCKED", 2)
    assert coupon.locked_order_id == "order-A"
    assert coupon.current_lock_id == result.lock.pk
    assert coupon.lock_expires_at == START + timedelta(seconds=900)
    assert result.state_version == 2


def test_lock_appends_one_ledger_row_and_a_coupon_locked_event(coupon, ctx):
    result, _ = lock(coupon, ctx, order_id="order-A")

    assert ledger(coupon) == [
        ("ISSUE", "", "AVAILABLE", 0, 1), ("LOCK", "AVAILABLE", "LOCKED", 1, 2),
    ]
    operation = CouponOperation.objects.get(coupon=coupon, op_type="LOCK")
    assert (operation.order_id, operation.lock_id, operation.actor) == (
        "order-A", result.lock.pk, "test",
    )
    assert events(coupon) == ["CouponIssued", "CouponLocked"]
    event = OutboxEvent.objects.get(operation=operation)
    assert event.payload["lock_id"] == str(result.lock.pk)
    assert event.payload["order_id"] == "order-A"


def test_lock_creates_an_active_lease_that_stores_only_the_token_hash(coupon, ctx):
    result, _ = lock(coupon, ctx)

    lease = CouponLock.objects.get(coupon=coupon)
    assert lease.status == "ACTIVE"
    assert (lease.order_id, lease.locked_at, lease.acquired_version) == ("order-A", START, 2)
    assert lease.expires_at == START + timedelta(seconds=900)
    token = result.lock_token
    assert len(token) >= 40
    assert lease.token_hash == hashlib.sha256(token.encode()).hexdigest()
    coupon.refresh_from_db()
    assert coupon.lock_token_hash == lease.token_hash
    assert token not in result.payload().values()


def test_lock_freezes_the_orders_discount_and_quote(coupon, ctx):
    result, _ = lock(coupon, ctx, amount="300.00", quote_id="Q-7")

    link = OrderCoupon.objects.get(lock=result.lock)
    assert (link.order_id, link.quote_id) == ("order-A", "Q-7")
    assert link.order_amount == Decimal("300.00")
    assert link.discount_amount == Decimal("30.00")
    assert link.template_version == coupon.template_version
    assert result.discount_amount == Decimal("30.00")


def test_lock_payload_has_decimal_string_and_iso_time(coupon, ctx):
    result, _ = lock(coupon, ctx)

    assert result.payload() == {
        "coupon_id": coupon.pk,
        "lock_id": str(result.lock.pk),
        "order_id": "order-A",
        "state_version": 2,
        "expires_at": "2026-06-01T12:15:00Z",
        "status": "LOCKED",
        "discount_amount": "30.00",
    }


def test_lock_honours_lease_seconds(coupon, ctx):
    result, _ = lock(coupon, ctx, lease_seconds=60)

    assert result.lock.expires_at == START + timedelta(seconds=60)


def test_lock_honours_lease_until_for_a_presale_deposit(coupon, ctx):
    final_payment_deadline = START + timedelta(days=10)
    result, _ = lock(coupon, ctx, lease_until=final_payment_deadline)

    coupon.refresh_from_db()
    assert result.lock.expires_at == coupon.lock_expires_at == final_payment_deadline


def test_lock_accepts_the_longest_lease_allowed(coupon, ctx):
    longest = START + timedelta(seconds=settings.COUPONS["MAX_LEASE_SECONDS"])
    result, _ = lock(coupon, ctx, lease_until=longest)

    assert result.lock.expires_at == longest


def test_order_amount_equal_to_the_threshold_is_enough(coupon, ctx):
    result, _ = lock(coupon, ctx, amount="200.00")

    assert result.discount_amount == Decimal("30.00")


def test_amount_off_never_exceeds_the_order_amount(clock, ctx):
    coupon = issue(ctx, face_value=Decimal("30.00"))
    result = lock_as(coupon, ctx, amount="12.50")

    assert result.discount_amount == Decimal("12.50")


@pytest.mark.parametrize(
    ("order_amount", "discount"),
    [("100.00", "15.00"), ("99.99", "14.99"), ("1000.00", "50.00"), ("0.01", "0.00")],
)
def test_percent_off_rounds_down_to_the_cent_and_stops_at_the_cap(clock, ctx, order_amount,
                                                                   discount):
    coupon = issue(ctx, kind="PERCENT_OFF", face_value=None, percent_off=Decimal("15"),
                   max_discount=Decimal("50.00"))
    result = lock_as(coupon, ctx, amount=order_amount)

    assert result.discount_amount == Decimal(discount)
    assert OrderCoupon.objects.get(lock=result.lock).discount_amount == Decimal(discount)


def test_exchange_coupon_is_worth_its_item(clock, ctx):
    coupon = issue(ctx, kind="EXCHANGE", face_value=Decimal("59.90"))

    assert lock_as(coupon, ctx, amount="80.00").discount_amount == Decimal("59.90")


def test_lock_at_the_first_valid_moment_succeeds(clock, ctx):
    coupon = issue(ctx, valid_from=START + timedelta(hours=1),
                   valid_until=START + timedelta(days=5))
    clock.advance(hours=1)

    assert lock_as(coupon, ctx).state_version == 2


def test_coupon_released_by_one_order_can_be_locked_by_another_with_a_new_token(coupon, ctx):
    first, proof = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
    second, _ = lock(coupon, ctx, order_id="order-B")

    assert second.state_version == 4
    assert second.lock.pk != first.lock.pk
    assert second.lock_token != first.lock_token
    assert dict(CouponLock.objects.filter(coupon=coupon).values_list("order_id", "status")) == {
        "order-A": "RELEASED", "order-B": "ACTIVE",
    }
    assert [row[0] for row in ledger(coupon)] == ["ISSUE", "LOCK", "RELEASE", "LOCK"]


# --- refusals -----------------------------------------------------------------------------


def test_lock_of_an_unknown_coupon_is_not_found(clock, ctx):
    with refused("NOT_FOUND", op_type="LOCK", coupon_id=987654) as error:
        coupon_lock(coupon_id=987654, order_id="order-A", user_id="u1",
                    order_amount=Decimal("300.00"), ctx=ctx)

    assert error.value.details == {"coupon_id": 987654}


def test_lock_by_another_user_is_refused_as_not_coupon_owner(coupon, ctx):
    with refused("NOT_COUPON_OWNER", op_type="LOCK", coupon_id=coupon.pk) as error:
        lock_as(coupon, ctx, user_id="u2")

    assert error.value.http_status == 422


def test_lock_before_the_window_opens_is_refused_as_not_yet_valid(clock, ctx):
    coupon = issue(ctx, valid_from=START + timedelta(hours=1),
                   valid_until=START + timedelta(days=5))

    with refused("COUPON_NOT_YET_VALID", op_type="LOCK", coupon_id=coupon.pk) as error:
        lock_as(coupon, ctx)

    assert error.value.details == {"valid_from": "2026-06-01T13:00:00Z"}


@pytest.mark.parametrize("days_later", [30, 31])
def test_lock_at_or_after_valid_until_is_refused_as_expired(coupon, ctx, clock, days_later):
    clock.advance(days=days_later)

    with refused("COUPON_EXPIRED", op_type="LOCK", coupon_id=coupon.pk) as error:
        lock(coupon, ctx)

    assert error.value.details == {"valid_until": "2026-07-01T12:00:00Z"}


def test_lock_below_the_threshold_is_refused(coupon, ctx):
    with refused("THRESHOLD_NOT_MET", op_type="LOCK", coupon_id=coupon.pk) as error:
        lock(coupon, ctx, amount="199.99")

    assert error.value.details == {"min_order_amount": "200.00", "order_amount": "199.99"}


def test_second_order_cannot_lock_a_locked_coupon(coupon, ctx):
    lock(coupon, ctx, order_id="order-A")

    with refused("INVALID_STATE", op_type="LOCK", coupon_id=coupon.pk) as error:
        lock(coupon, ctx, order_id="order-B")

    assert error.value.details == {
        "current_state": "LOCKED", "current_version": 2, "operation": "LOCK",
    }
    assert error.value.http_status == 409


def test_refused_lock_is_logged_with_the_order_it_named(coupon, ctx):
    lock(coupon, ctx, order_id="order-A")
    with refused("INVALID_STATE", op_type="LOCK", coupon_id=coupon.pk):
        lock(coupon, ctx, order_id="order-B")

    assert CommandRejection.objects.get().order_id == "order-B"


def finish(coupon, ctx, clock, end_state):
    """Drive the coupon to USED, EXPIRED or VOID through the services."""
    if end_state == "USED":
        result, proof = lock(coupon, ctx)
        coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id="P1", ctx=ctx)
    elif end_state == "EXPIRED":
        clock.advance(days=31)
        coupon_expire(coupon_id=coupon.pk, expected_version=1, ctx=ctx)
    else:
        coupon_void(coupon_id=coupon.pk, expected_version=1, reason="campaign closed", ctx=ctx)
    coupon.refresh_from_db()
    return coupon


@pytest.mark.parametrize("end_state", ["USED", "EXPIRED", "VOID"])
def test_lock_of_a_finished_coupon_is_refused_as_invalid_state(coupon, ctx, clock, end_state):
    coupon = finish(coupon, ctx, clock, end_state)

    with refused("INVALID_STATE", op_type="LOCK", coupon_id=coupon.pk) as error:
        lock_as(coupon, ctx, order_id="order-Z")

    assert error.value.details["current_state"] == end_state
    assert error.value.details["current_version"] == coupon.state_version


def test_state_is_checked_before_ownership(coupon, ctx):
    lock(coupon, ctx)

    with refused("INVALID_STATE", op_type="LOCK", coupon_id=coupon.pk):
        lock_as(coupon, ctx, user_id="someone-else", order_id="order-B")


def test_ownership_is_checked_before_validity_and_threshold(coupon, ctx, clock):
    clock.advance(days=40)

    with refused("NOT_COUPON_OWNER", op_type="LOCK", coupon_id=coupon.pk):
        lock_as(coupon, ctx, user_id="u2", amount="1.00")


@pytest.mark.parametrize(
    "window",
    [
        pytest.param({"lease_seconds": 60, "lease_until": START + timedelta(hours=1)}, id="both"),
        pytest.param({"lease_until": START - timedelta(seconds=1)}, id="past"),
        pytest.param({"lease_until": START}, id="now"),
        pytest.param({"lease_until": START + timedelta(days=91)}, id="too-long"),
        pytest.param({"lease_seconds": 91 * 24 * 3600}, id="too-many-seconds"),
    ],
)
def test_lock_with_an_impossible_lease_window_is_a_validation_error(coupon, ctx, window):
    with refused("VALIDATION_ERROR", op_type="LOCK", coupon_id=coupon.pk) as error:
        lock(coupon, ctx, **window)

    assert error.value.http_status == 400


def test_no_lock_row_or_discount_evidence_survives_a_refusal(coupon, ctx):
    with refused("THRESHOLD_NOT_MET", op_type="LOCK", coupon_id=coupon.pk):
        lock(coupon, ctx, amount="10.00")

    assert not CouponLock.objects.exists()
    assert not OrderCoupon.objects.exists()


def test_lock_one_second_before_valid_until_succeeds(clock, ctx):
    coupon = issue(ctx, valid_from=datetime(2026, 5, 1, tzinfo=UTC),
                   valid_until=datetime(2026, 6, 1, 12, 0, 1, tzinfo=UTC))

    assert lock_as(coupon, ctx).state_version == 2

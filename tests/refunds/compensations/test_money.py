"""Money compensations: a COMPENSATE ledger row with the amount, the same state, version +1."""

from decimal import Decimal

import pytest

from coupons.models import CouponOperation, OutboxEvent, UserCoupon
from coupons.services import CommandContext
from refunds.models import Compensation
from refunds.services.compensation_record import compensation_record as shortfall_recorded
from tests.command_checks import events, ledger, world
from tests.conftest import lock
from tests.refunds.compensations.conftest import approve, error, ok, propose

pytestmark = pytest.mark.django_db


def test_approved_money_appends_compensate_with_the_amount_and_keeps_the_state(
    alice, bob, redeemed,
):
    coupon = redeemed.coupon
    proposal = ok(propose(alice, redeemed, amount="12.50", reason="charged twice"), 201)
    assert (proposal["kind"], proposal["amount"]) == ("MONEY", "12.50")

    body = ok(approve(bob, proposal["id"]))

    row = body["resulting_operation"]
    assert (row["op_type"], row["from_state"], row["to_state"]) == ("COMPENSATE", "USED", "USED")
    assert (row["from_version"], row["to_version"], row["amount"]) == (3, 4, "12.50")
    assert row["original_operation_id"] == redeemed.pk
    assert ledger(coupon)[-1] == ("COMPENSATE", "USED", "USED", 3, 4)
    stored = CouponOperation.objects.get(pk=row["id"])
    assert (stored.amount, stored.order_id, stored.actor) == (
        Decimal("12.50"), "order-A", "user:bob",
    )
    assert events(coupon)[-1] == "CouponCompensated"
    payload = OutboxEvent.objects.filter(coupon=coupon).latest("pk").payload
    assert (payload["amount"], payload["state_version"], payload["order_id"]) == (
        "12.50", 4, "order-A",
    )
    assert UserCoupon.objects.get(pk=coupon.pk).status == "USED"


def test_money_waits_while_an_order_holds_the_lease(alice, bob, coupon, ctx):
    locked, _ = lock(coupon, ctx, order_id="order-B")
    first_lock = coupon.operations.get(op_type="LOCK")
    proposal = ok(propose(alice, first_lock, amount="4.00", reason="quoted the wrong price"),
                  201)
    before = world()

    details = error(approve(bob, proposal["id"]), 409, "INVALID_STATE")

    # The order's expected_version must stay good: nothing was written.
    assert (details["current_state"], details["current_version"]) == ("LOCKED", 2)
    assert details["locked_order_id"] == "order-B"
    assert world() == before


@pytest.mark.parametrize("kind", ["PRESALE_EXPIRED_COUPON", "ORDER_DISCOUNT_REFUND"])
def test_shortfalls_recorded_by_the_system_are_approvable_money(bob, redeemed, kind):
    shortfall = shortfall_recorded(
        kind=kind, order_id="order-Z", coupon=redeemed.coupon, amount=Decimal("30.00"),
        reason="the order paid in full", actor="system:coordinator",
    )

    body = ok(approve(bob, shortfall.pk, note="paid back by the order service"))

    row = body["resulting_operation"]
    assert (body["kind"], body["status"], body["operation_id"]) == (kind, "APPROVED", None)
    assert (row["op_type"], row["to_state"], row["amount"], row["original_operation_id"]) == (
        "COMPENSATE", "USED", "30.00", None,
    )
    assert CouponOperation.objects.get(pk=row["id"]).order_id == "order-Z"


def test_a_shortfall_and_an_operator_money_compensation_live_side_by_side(
    alice, bob, redeemed,
):
    # The shortfall uniqueness (one per order, coupon and kind) is only for shortfalls.
    shortfall_recorded(kind="ORDER_DISCOUNT_REFUND", order_id="order-A", coupon=redeemed.coupon,
                       amount=Decimal("30.00"), reason="case 1", actor="system:coordinator")
    first = ok(propose(alice, redeemed, amount="1.00"), 201)
    ok(approve(bob, first["id"]))
    second = ok(propose(alice, redeemed, amount="2.00", reason="and the delivery fee"), 201)

    assert ok(approve(bob, second["id"]))["resulting_operation"]["amount"] == "2.00"
    assert Compensation.objects.count() == 3


def test_a_zero_or_negative_amount_is_refused(alice, redeemed):
    for amount in ("0.00", "-3.00", "abc"):
        details = error(propose(alice, redeemed, amount=amount), 400, "VALIDATION_ERROR")
        assert "amount" in details
    assert not Compensation.objects.exists()


def test_the_service_refuses_a_proposal_without_a_reason(redeemed):
    from coupons.errors import ValidationFailed
    from refunds.services.compensation_propose import compensation_propose

    with pytest.raises(ValidationFailed):
        compensation_propose(coupon_id=redeemed.coupon_id, operation_id=redeemed.pk,
                             reason="  ", ctx=CommandContext(actor="user:alice"))

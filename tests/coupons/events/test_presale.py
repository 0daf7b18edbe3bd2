"""Presale orders (validity and presale, docs/design.md): the coupon is locked at deposit and
settled at final payment under the template's expiry_during_lock strategy, even when it expired in
between."""

from datetime import timedelta
from decimal import Decimal

import pytest

from coupons.models import (
    CommandRejection,
    CouponLock,
    CouponOperation,
    OrderCoupon,
    PresaleSettlement,
    Redemption,
    UserCoupon,
)
from coupons.services import CommandContext, coupon_issue, template_create, template_update
from coupons.write.payloads import iso
from refunds.models import Compensation
from tests.command_checks import ledger
from tests.conftest import START, lock

pytestmark = pytest.mark.django_db

VALID_FROM = START - timedelta(days=1)
VALID_UNTIL = START + timedelta(days=10)
DEADLINE = START + timedelta(days=14)  # the final-payment window outlives the coupon
GRACE = timedelta(days=1)  # settings.COUPONS["PRESALE_GRACE_SECONDS"]
ORDER = "PS-1"

PAY_TIMES = {
    "before": VALID_UNTIL - timedelta(minutes=1),
    "at": VALID_UNTIL,
    "after": VALID_UNTIL + timedelta(days=2),
}


def presale_template(code, strategy="LOCK_HONORS", *, kind="AMOUNT_OFF", face_value="50.00",
                     min_order_amount="300.00", valid_from=VALID_FROM, valid_until=VALID_UNTIL,
                     **terms):
    """A fixed-window template: 50 off orders of 300 or more, like a typical presale."""
    return template_create(
        code=code, name=code, kind=kind,
        face_value=Decimal(face_value) if face_value is not None else None,
        min_order_amount=Decimal(min_order_amount), valid_from=valid_from,
        valid_until=valid_until, expiry_during_lock=strategy, **terms,
    )


def issue(template, user_id="u1"):
    return coupon_issue(template_id=template.pk, user_id=user_id,
                        ctx=CommandContext(actor="test")).coupon


def deposit(send, coupon, order_id=ORDER, amount="1000.00", deadline=DEADLINE, **extra):
    return send("DepositPaid", order_id=order_id, coupon_id=coupon.pk, user_id=coupon.user_id,
                order_amount=amount, final_payment_deadline=deadline.isoformat(),
                quote_id=f"Q-{order_id}", **extra)


def final_payment(send, order_id=ORDER, payment_id="FP-1", message_id=None, occurred_at=None,
                  **charged):
    return send("FinalPaymentSucceeded", message_id=message_id, order_id=order_id,
                payment_id=payment_id, occurred_at=occurred_at, **charged)


def snapshot(coupon) -> tuple:
    coupon.refresh_from_db()
    return coupon.status, coupon.state_version


@pytest.fixture
def presale_coupon(clock, send):
    """Factory: a coupon of a fresh template with the given strategy, deposited for ORDER."""

    def make(strategy):
        coupon = issue(presale_template(f"presale-{strategy.lower()}", strategy))
        assert deposit(send, coupon)["outcome"]["action"] == "LOCKED"
        return coupon

    return make


# --- deposit ------------------------------------------------------------------------------


def test_deposit_locks_the_coupon_until_the_final_payment_deadline_plus_grace(clock, send):
    coupon = issue(presale_template("presale"))

    answer = deposit(send, coupon)

    outcome = answer["outcome"]
    assert (answer["status"], outcome["action"]) == ("PROCESSED", "LOCKED")
    assert outcome["expires_at"] == iso(DEADLINE + GRACE)
    coupon.refresh_from_db()
    assert (coupon.status, coupon.locked_order_id) == ("LOCKED", ORDER)
    assert coupon.lock_expires_at == DEADLINE + GRACE
    lease = CouponLock.objects.get(coupon=coupon)
    assert (lease.order_id, lease.status, lease.locked_at) == (ORDER, "ACTIVE", START)
    assert str(lease.pk) == outcome["lock_id"]
    assert ledger(coupon) == [
        ("ISSUE", "", "AVAILABLE", 0, 1),
        ("LOCK", "AVAILABLE", "LOCKED", 1, 2),
    ]
    assert CouponOperation.objects.get(coupon=coupon, op_type="LOCK").actor == (
        "system:coordinator"
    )


def test_deposit_freezes_the_orders_discount_and_quote(clock, send):
    coupon = issue(presale_template("presale"))

    deposit(send, coupon, amount="1000.00")

    binding = OrderCoupon.objects.get(order_id=ORDER)
    assert binding.coupon == coupon
    assert (binding.order_amount, binding.discount_amount) == (
        Decimal("1000.00"), Decimal("50.00"),
    )
    assert binding.quote_id == f"Q-{ORDER}"
    assert binding.template_version == coupon.template_version


def test_deposit_lease_grace_comes_from_settings(clock, send, settings):
    settings.COUPONS = {**settings.COUPONS, "PRESALE_GRACE_SECONDS": 3600}
    coupon = issue(presale_template("presale"))

    deposit(send, coupon)

    coupon.refresh_from_db()
    assert coupon.lock_expires_at == DEADLINE + timedelta(hours=1)


def test_redelivered_deposit_keeps_the_one_lease(clock, send):
    coupon = issue(presale_template("presale"))
    deposit(send, coupon)
    clock.advance(hours=1)

    again = deposit(send, coupon)

    assert again["outcome"]["action"] == "ALREADY_LOCKED"
    assert again["outcome"]["repeated_fact"] is True
    assert CouponLock.objects.filter(coupon=coupon).count() == 1
    assert snapshot(coupon) == ("LOCKED", 2)


def test_deposit_redelivered_after_the_order_closed_does_not_lock_again(clock, send):
    coupon = issue(presale_template("presale"))
    deposit(send, coupon)
    send("OrderClosed", order_id=ORDER)

    late = deposit(send, coupon)

    assert late["outcome"]["action"] == "IGNORED"
    assert snapshot(coupon) == ("AVAILABLE", 3)
    assert CouponLock.objects.filter(coupon=coupon, status="ACTIVE").count() == 0


# --- final payment: strategy x time -------------------------------------------------------

# (strategy, when the final payment arrives) → (settlement, coupon status, order's discount)
SETTLEMENTS = [
    ("LOCK_HONORS", "before", "REDEEMED", "USED", "50.00"),
    ("LOCK_HONORS", "at", "REDEEMED", "USED", "50.00"),
    ("LOCK_HONORS", "after", "REDEEMED", "USED", "50.00"),
    ("STRICT", "before", "REDEEMED", "USED", "50.00"),
    ("STRICT", "at", "PAID_IN_FULL", "EXPIRED", "0.00"),
    ("STRICT", "after", "PAID_IN_FULL", "EXPIRED", "0.00"),
    ("SUBSTITUTE", "before", "REDEEMED", "USED", "50.00"),
    ("SUBSTITUTE", "at", "COMPENSATED", "EXPIRED", "50.00"),
    ("SUBSTITUTE", "after", "COMPENSATED", "EXPIRED", "50.00"),
]


@pytest.mark.parametrize(
    ("strategy", "pay_at", "settlement", "status", "discount"), SETTLEMENTS,
    ids=[f"{row[0]}-{row[1]}" for row in SETTLEMENTS],
)
def test_final_payment_settles_by_strategy_and_time(
    clock, send, presale_coupon, strategy, pay_at, settlement, status, discount,
):
    coupon = presale_coupon(strategy)
    clock.set(PAY_TIMES[pay_at])

    outcome = final_payment(send)["outcome"]

    assert (outcome["action"], outcome["settlement"]) == (settlement, settlement)
    assert outcome["discount_amount"] == discount
    assert outcome["coupon_id"] == coupon.pk
    settled = PresaleSettlement.objects.get(order_id=ORDER)
    assert (settled.coupon, settled.strategy, settled.result) == (coupon, strategy, settlement)
    assert (settled.discount_amount, settled.payment_id) == (Decimal(discount), "FP-1")
    assert settled.settled_at == PAY_TIMES[pay_at]
    assert snapshot(coupon)[0] == status


@pytest.mark.parametrize("strategy", ["LOCK_HONORS", "STRICT", "SUBSTITUTE"])
def test_final_payment_before_valid_until_redeems_with_the_frozen_discount(
    clock, send, presale_coupon, strategy,
):
    coupon = presale_coupon(strategy)
    clock.set(PAY_TIMES["before"])

    final_payment(send)

    assert ledger(coupon) == [
        ("ISSUE", "", "AVAILABLE", 0, 1),
        ("LOCK", "AVAILABLE", "LOCKED", 1, 2),
        ("REDEEM", "LOCKED", "USED", 2, 3),
    ]
    redemption = Redemption.objects.get(coupon=coupon)
    assert (redemption.order_id, redemption.payment_id) == (ORDER, "FP-1")
    assert redemption.discount_amount == Decimal("50.00")
    assert not CommandRejection.objects.exists()
    assert not Compensation.objects.exists()


@pytest.mark.parametrize("pay_at", ["at", "after"])
def test_lock_honors_redeems_at_or_after_valid_until(clock, send, presale_coupon, pay_at):
    coupon = presale_coupon("LOCK_HONORS")
    clock.set(PAY_TIMES[pay_at])

    final_payment(send)

    assert [row[0] for row in ledger(coupon)] == ["ISSUE", "LOCK", "REDEEM"]
    assert Redemption.objects.get(coupon=coupon).discount_amount == Decimal("50.00")
    assert not CommandRejection.objects.exists()


@pytest.mark.parametrize("pay_at", ["at", "after"])
def test_strict_final_payment_at_or_after_valid_until_expires_the_coupon_and_charges_full_price(
    clock, send, presale_coupon, pay_at,
):
    coupon = presale_coupon("STRICT")
    clock.set(PAY_TIMES[pay_at])

    final_payment(send)

    assert ledger(coupon) == [
        ("ISSUE", "", "AVAILABLE", 0, 1),
        ("LOCK", "AVAILABLE", "LOCKED", 1, 2),
        ("RELEASE", "LOCKED", "EXPIRED", 2, 3),
    ]
    release = CouponOperation.objects.get(coupon=coupon, op_type="RELEASE")
    assert (release.order_id, release.actor) == (ORDER, "system:coordinator")
    assert "STRICT" in release.reason
    assert CouponLock.objects.get(coupon=coupon).status == "RELEASED"
    assert not Redemption.objects.exists()
    rejection = CommandRejection.objects.get()
    assert (rejection.op_type, rejection.error_code, rejection.coupon_id_ref) == (
        "REDEEM", "COUPON_EXPIRED", coupon.pk,
    )
    assert rejection.order_id == ORDER
    assert rejection.details["valid_until"] == iso(VALID_UNTIL)
    settled = PresaleSettlement.objects.get(order_id=ORDER)
    assert (settled.result, settled.discount_amount, settled.substitute) == (
        "PAID_IN_FULL", Decimal("0.00"), None,
    )
    assert not Compensation.objects.exists()


# --- SUBSTITUTE ---------------------------------------------------------------------------


FAR = VALID_UNTIL + timedelta(days=60)


def amount_off(code, user="u1", face="50.00", minimum="300.00", until=FAR, frm=VALID_FROM):
    template = presale_template(code, face_value=face, min_order_amount=minimum,
                                valid_from=frm, valid_until=until)
    return issue(template, user_id=user)


@pytest.fixture
def misfits(clock):
    """Coupons that must not stand in for the expired one: each fails one condition."""
    coupons = {
        "other_user": amount_off("sub-other-user", user="u2"),
        "other_kind": issue(presale_template(
            "sub-percent", kind="PERCENT_OFF", face_value=None, percent_off=Decimal("10"),
            valid_until=FAR,
        )),  # 10 % of 1000 is 100: worth more, but not the same kind
        "threshold_too_high": amount_off("sub-threshold", face="60.00", minimum="2000.00"),
        "too_small": amount_off("sub-small", face="40.00"),
        "expired": amount_off("sub-expired", until=START + timedelta(days=5)),
        "not_yet_valid": amount_off("sub-future", frm=VALID_UNTIL + timedelta(days=20)),
        "locked": amount_off("sub-locked"),
    }
    lock(coupons["locked"], CommandContext(actor="test"), order_id="OTHER-ORDER",
         amount="1000.00", lease_until=DEADLINE + timedelta(days=30))
    return coupons


@pytest.fixture
def wallet(misfits):
    """The misfits plus three coupons that fit; made in this order so that neither "lowest
    id" nor "first issued" picks the right one."""
    return {
        "bigger": amount_off("sub-bigger", face="80.00"),
        "later_same": amount_off("sub-later", until=VALID_UNTIL + timedelta(days=30)),
        "earliest_same": amount_off("sub-earliest", until=VALID_UNTIL + timedelta(days=5)),
        **misfits,
    }


@pytest.mark.parametrize("pay_at", ["at", "after"])
def test_substitute_locks_and_redeems_the_cheapest_sufficient_earliest_expiring_coupon(
    clock, send, presale_coupon, wallet, pay_at,
):
    original = presale_coupon("SUBSTITUTE")
    before = {name: snapshot(coupon) for name, coupon in wallet.items()}
    clock.set(PAY_TIMES[pay_at])

    outcome = final_payment(send)["outcome"]

    chosen = wallet["earliest_same"]
    assert (outcome["action"], outcome["substitute_coupon_id"]) == ("SUBSTITUTED", chosen.pk)
    assert outcome["discount_amount"] == "50.00"
    assert ledger(chosen) == [
        ("ISSUE", "", "AVAILABLE", 0, 1),
        ("LOCK", "AVAILABLE", "LOCKED", 1, 2),
        ("REDEEM", "LOCKED", "USED", 2, 3),
    ]
    assert set(CouponOperation.objects.filter(coupon=chosen, op_type__in=["LOCK", "REDEEM"])
               .values_list("order_id", "actor")) == {(ORDER, "system:coordinator")}
    redemption = Redemption.objects.get()
    assert (redemption.coupon, redemption.order_id, redemption.payment_id) == (
        chosen, ORDER, "FP-1",
    )
    assert redemption.discount_amount == Decimal("50.00")
    assert [row[:3] for row in ledger(original)] == [
        ("ISSUE", "", "AVAILABLE"), ("LOCK", "AVAILABLE", "LOCKED"),
        ("RELEASE", "LOCKED", "EXPIRED"),
    ]
    settled = PresaleSettlement.objects.get(order_id=ORDER)
    assert (settled.result, settled.coupon, settled.substitute) == (
        "SUBSTITUTED", original, chosen,
    )
    assert settled.discount_amount == Decimal("50.00")
    assert not Compensation.objects.exists()
    untouched = {name: snapshot(c) for name, c in wallet.items() if name != "earliest_same"}
    assert untouched == {name: state for name, state in before.items()
                         if name != "earliest_same"}


def test_substitute_prefers_the_cheapest_even_when_it_expires_later(
    clock, send, presale_coupon,
):
    soon_but_bigger = issue(presale_template("sub-bigger-soon", face_value="70.00",
                                             valid_until=VALID_UNTIL + timedelta(days=3)))
    late_but_exact = issue(presale_template("sub-exact-late", face_value="50.00",
                                            valid_until=VALID_UNTIL + timedelta(days=90)))
    presale_coupon("SUBSTITUTE")
    clock.set(PAY_TIMES["after"])

    outcome = final_payment(send)["outcome"]

    assert outcome["substitute_coupon_id"] == late_but_exact.pk
    assert snapshot(soon_but_bigger) == ("AVAILABLE", 1)


def test_substitute_takes_a_bigger_coupon_when_it_is_the_only_one_that_suffices(
    clock, send, presale_coupon,
):
    bigger = issue(presale_template("sub-bigger", face_value="80.00",
                                    valid_until=VALID_UNTIL + timedelta(days=30)))
    presale_coupon("SUBSTITUTE")
    clock.set(PAY_TIMES["after"])

    outcome = final_payment(send)["outcome"]

    assert (outcome["action"], outcome["substitute_coupon_id"]) == ("SUBSTITUTED", bigger.pk)
    assert snapshot(bigger) == ("USED", 3)
    # It stands in for the order's 50.00; its evidence does not claim its own 80.00.
    assert Redemption.objects.get(coupon=bigger).discount_amount == Decimal("50.00")
    assert OrderCoupon.objects.get(coupon=bigger).discount_amount == Decimal("50.00")


@pytest.mark.parametrize("pay_at", ["at", "after"])
def test_substitute_without_a_fitting_coupon_records_a_compensation_for_the_discount(
    clock, send, presale_coupon, misfits, pay_at,
):
    original = presale_coupon("SUBSTITUTE")
    before = {name: snapshot(coupon) for name, coupon in misfits.items()}
    clock.set(PAY_TIMES[pay_at])

    outcome = final_payment(send)["outcome"]

    assert (outcome["action"], outcome["substitute_coupon_id"]) == ("COMPENSATED", None)
    compensation = Compensation.objects.get()
    assert (compensation.kind, compensation.status) == ("PRESALE_EXPIRED_COUPON", "PROPOSED")
    assert (compensation.order_id, compensation.coupon, compensation.amount) == (
        ORDER, original, Decimal("50.00"),
    )
    assert compensation.created_by == "system:coordinator"
    settled = PresaleSettlement.objects.get(order_id=ORDER)
    assert (settled.result, settled.discount_amount, settled.substitute) == (
        "COMPENSATED", Decimal("50.00"), None,
    )
    assert snapshot(original) == ("EXPIRED", 3)
    assert not Redemption.objects.exists()
    assert {name: snapshot(coupon) for name, coupon in misfits.items()} == before


# --- order closed -------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["LOCK_HONORS", "STRICT", "SUBSTITUTE"])
def test_presale_order_closed_before_valid_until_releases_the_coupon_to_available(
    clock, send, presale_coupon, strategy,
):
    coupon = presale_coupon(strategy)
    clock.advance(days=3)

    outcome = send("OrderClosed", order_id=ORDER)["outcome"]

    assert (outcome["action"], outcome["status"]) == ("RELEASED", "AVAILABLE")
    assert ledger(coupon)[-1] == ("RELEASE", "LOCKED", "AVAILABLE", 2, 3)
    assert CouponLock.objects.get(coupon=coupon).status == "RELEASED"
    assert not PresaleSettlement.objects.exists()


@pytest.mark.parametrize("closed_at", ["at", "after"])
@pytest.mark.parametrize("strategy", ["LOCK_HONORS", "STRICT", "SUBSTITUTE"])
def test_presale_order_closed_past_valid_until_releases_the_coupon_to_expired(
    clock, send, presale_coupon, strategy, closed_at,
):
    coupon = presale_coupon(strategy)
    clock.set(PAY_TIMES[closed_at])

    outcome = send("OrderClosed", order_id=ORDER)["outcome"]

    assert (outcome["action"], outcome["status"]) == ("RELEASED", "EXPIRED")
    assert ledger(coupon)[-1] == ("RELEASE", "LOCKED", "EXPIRED", 2, 3)


def test_presale_order_closed_after_final_payment_keeps_the_coupon_used(
    clock, send, presale_coupon,
):
    coupon = presale_coupon("LOCK_HONORS")
    clock.set(PAY_TIMES["after"])
    final_payment(send)

    outcome = send("OrderClosed", order_id=ORDER)["outcome"]

    assert outcome["action"] == "IGNORED"
    assert snapshot(coupon) == ("USED", 3)


# --- duplicates ---------------------------------------------------------------------------


@pytest.mark.parametrize("redelivery", ["same_message_id", "new_message_id"])
@pytest.mark.parametrize(("strategy", "with_substitute"), [
    ("LOCK_HONORS", False), ("STRICT", False), ("SUBSTITUTE", True), ("SUBSTITUTE", False),
])
def test_duplicate_final_payment_settles_once(
    clock, send, presale_coupon, strategy, with_substitute, redelivery,
):
    if with_substitute:
        issue(presale_template("sub", valid_until=VALID_UNTIL + timedelta(days=30)))
    presale_coupon(strategy)
    clock.set(PAY_TIMES["after"])
    paid_at = clock.now()
    first = final_payment(send, message_id="fp-1", occurred_at=paid_at)
    world = (list(CouponOperation.objects.values_list("pk", flat=True)),
             list(UserCoupon.objects.order_by("pk").values_list("status", "state_version")))
    clock.advance(minutes=5)

    # The broker redelivers the same message; a retry under a new id is a new message.
    second = final_payment(send, message_id="fp-1" if redelivery == "same_message_id" else "fp-2",
                           occurred_at=paid_at)

    if redelivery == "same_message_id":
        assert second["status"] == "DUPLICATE"
        assert second["outcome"] == first["outcome"]
    else:
        assert second["status"] == "PROCESSED"
        assert second["outcome"]["action"] == "ALREADY_SETTLED"
        assert second["outcome"]["settlement"] == first["outcome"]["settlement"]
        assert second["outcome"]["repeated_fact"] is True
    assert PresaleSettlement.objects.count() == 1
    assert Redemption.objects.count() == (0 if strategy == "STRICT" or (
        strategy == "SUBSTITUTE" and not with_substitute) else 1)
    assert Compensation.objects.count() == (
        1 if strategy == "SUBSTITUTE" and not with_substitute else 0
    )
    assert world == (
        list(CouponOperation.objects.values_list("pk", flat=True)),
        list(UserCoupon.objects.order_by("pk").values_list("status", "state_version")),
    )


# --- the order's discount snapshot --------------------------------------------------------


@pytest.mark.parametrize("strategy", ["LOCK_HONORS", "SUBSTITUTE"])
def test_template_edit_between_deposit_and_final_payment_keeps_the_orders_discount(
    clock, send, strategy,
):
    template = presale_template("presale", strategy)
    coupon = issue(template)
    deposit(send, coupon)
    frozen = list(OrderCoupon.objects.values())
    clock.advance(days=2)

    edited = template_update(
        template_id=template.pk, face_value=Decimal("80.00"),
        min_order_amount=Decimal("2000.00"), expiry_during_lock="STRICT",
        valid_until=VALID_UNTIL + timedelta(days=30),
    )
    clock.set(PAY_TIMES["after"])
    outcome = final_payment(send)["outcome"]

    assert edited.version == 2
    assert list(OrderCoupon.objects.filter(pk__in=[row["id"] for row in frozen]).values()) == (
        frozen
    )
    assert outcome["discount_amount"] == "50.00"
    coupon.refresh_from_db()
    assert coupon.template_version.version == 1
    assert coupon.valid_until == VALID_UNTIL
    if strategy == "LOCK_HONORS":  # the edit to STRICT does not reach an issued coupon
        assert outcome["action"] == "REDEEMED"
        assert Redemption.objects.get().discount_amount == Decimal("50.00")
    else:  # the compensation is the order's discount, not the edited face value
        assert outcome["action"] == "COMPENSATED"
        assert Compensation.objects.get().amount == Decimal("50.00")


def test_a_declined_final_payment_keeps_the_deposits_coupon(presale_coupon, send, clock):
    coupon = presale_coupon("LOCK_HONORS")
    answer = send("PaymentFailed", order_id=ORDER)
    assert answer["outcome"]["action"] == "IGNORED"
    assert snapshot(coupon) == ("LOCKED", 2)
    clock.set(PAY_TIMES["after"])
    assert final_payment(send)["outcome"]["action"] == "REDEEMED"
    assert snapshot(coupon)[0] == "USED"


def test_deposit_stretches_a_short_checkout_lease_to_the_deadline(clock, send):
    coupon = issue(presale_template("presale-quote-lock"))
    lock(coupon, CommandContext(actor="test"), order_id=ORDER, amount="1000.00",
         lease_seconds=900)
    answer = deposit(send, coupon)
    assert answer["outcome"]["action"] == "LEASE_EXTENDED"
    coupon.refresh_from_db()
    assert coupon.lock_expires_at == DEADLINE + GRACE
    assert [op for op, *_ in ledger(coupon)] == ["ISSUE", "LOCK", "RENEW"]
    assert deposit(send, coupon)["outcome"]["action"] == "ALREADY_LOCKED"


def test_strict_records_what_the_final_payment_actually_charged(presale_coupon, clock, send):
    """The order service asked the pre-check too late (or not at all) and applied the
    discount: the settlement keeps what the coupon gave (nothing) and what was charged."""
    presale_coupon("STRICT")
    clock.set(PAY_TIMES["after"])

    outcome = final_payment(send, discount_applied="50.00", amount_charged="950.00")["outcome"]

    assert (outcome["action"], outcome["discount_amount"], outcome["discount_applied"],
            outcome["amount_charged"]) == ("PAID_IN_FULL", "0.00", "50.00", "950.00")
    settled = PresaleSettlement.objects.get(order_id=ORDER)
    assert (settled.discount_amount, settled.amount_charged) == (Decimal(0), Decimal("950.00"))


def test_a_final_payment_without_the_amounts_records_none(presale_coupon, clock, send):
    presale_coupon("STRICT")

    outcome = final_payment(send)["outcome"]

    assert (outcome["action"], outcome["amount_charged"]) == ("REDEEMED", None)

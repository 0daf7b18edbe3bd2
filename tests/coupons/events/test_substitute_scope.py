"""A substitute must cover the scope of the coupon it stands in for (docs/design.md, presale):
every store the original applies at, or all stores, and its channel, or every channel. A
coupon worth more but narrower is refused; one as wide or wider is taken."""

from datetime import timedelta

import pytest

from coupons.final_payment_check import final_payment_check
from coupons.models import UserCoupon
from tests.coupons.events.test_presale import (
    ORDER,
    PAY_TIMES,
    VALID_UNTIL,
    deposit,
    final_payment,
    issue,
    presale_template,
    snapshot,
)

pytestmark = pytest.mark.django_db

FAR = VALID_UNTIL + timedelta(days=60)


def scoped(code, *, face="50.00", **scope) -> UserCoupon:
    return issue(presale_template(code, face_value=face, valid_until=FAR, **scope))


def deposited(send, **scope) -> UserCoupon:
    """The original: SUBSTITUTE, 50 off, deposited for ORDER, with `scope`."""
    coupon = issue(presale_template("original", "SUBSTITUTE", **scope))
    assert deposit(send, coupon)["outcome"]["action"] == "LOCKED"
    return coupon


@pytest.mark.parametrize(("original", "narrower"), [
    # Applies at S1 and S2; the better coupon only at S1.
    ({"stores": ["S1", "S2"]}, {"stores": ["S1"]}),
    # Every store; the better coupon only at some.
    ({}, {"stores": ["S1", "S2", "S3"]}),
    # Delivery; the better coupon is for dine-in.
    ({"channel": "DELIVERY"}, {"channel": "DINE_IN"}),
    # Every channel; the better coupon only for takeaway.
    ({}, {"channel": "TAKEAWAY"}),
    # The right stores, the wrong channel.
    ({"stores": ["S1"], "channel": "DELIVERY"}, {"stores": ["S1"], "channel": "TAKEAWAY"}),
])
def test_a_better_coupon_with_a_narrower_scope_is_refused(clock, send, original, narrower):
    deposited(send, **original)
    better_but_narrow = scoped("narrow", face="80.00", **narrower)
    clock.set(PAY_TIMES["after"])

    outcome = final_payment(send)["outcome"]

    assert (outcome["action"], outcome["substitute_coupon_id"]) == ("COMPENSATED", None)
    assert snapshot(better_but_narrow) == ("AVAILABLE", 1)


@pytest.mark.parametrize(("original", "wider"), [
    ({"stores": ["S1", "S2"]}, {"stores": ["S1", "S2", "S3"]}),
    ({"stores": ["S1", "S2"]}, {}),
    ({"channel": "DELIVERY"}, {"channel": "DELIVERY"}),
    ({"stores": ["S2"], "channel": "DINE_IN"}, {}),
    ({}, {}),
])
def test_a_coupon_whose_scope_covers_the_originals_stands_in(clock, send, original, wider):
    deposited(send, **original)
    wide = scoped("wide", **wider)
    clock.set(PAY_TIMES["after"])

    outcome = final_payment(send)["outcome"]

    assert (outcome["action"], outcome["substitute_coupon_id"]) == ("SUBSTITUTED", wide.pk)
    assert snapshot(wide) == ("USED", 3)


def test_the_cheapest_covering_coupon_wins_over_a_cheaper_narrow_one(clock, send):
    deposited(send, stores=["S1"], channel="DELIVERY")
    cheap_but_dine_in = scoped("dine-in", channel="DINE_IN")
    covering = scoped("covering", face="60.00", stores=["S1", "S9"])
    clock.set(PAY_TIMES["after"])

    check = final_payment_check(order_id=ORDER, now=clock.now())
    outcome = final_payment(send)["outcome"]

    assert check.substitute == covering
    assert outcome["substitute_coupon_id"] == covering.pk
    assert snapshot(cheap_but_dine_in) == ("AVAILABLE", 1)

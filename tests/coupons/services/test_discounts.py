"""discount_for on its own: the percent cap and the order amount bound every discount.

The lock tests show the same through coupon_lock; these pin the rule itself, kind by kind.
"""

from decimal import Decimal
from types import SimpleNamespace

import pytest

from coupons.discounts import discount_for
from tests.coupons.services.test_lock import issue, lock_as


def terms(kind, face_value=None, percent_off=None, max_discount=None):
    return SimpleNamespace(kind=kind, face_value=face_value, percent_off=percent_off,
                           max_discount=max_discount)


@pytest.mark.parametrize(
    ("order_amount", "max_discount", "discount"),
    [
        ("1000.00", "50.00", "50.00"),  # 20% would be 200: the cap wins
        ("250.00", "50.00", "50.00"),  # exactly at the cap
        ("249.95", "50.00", "49.99"),  # just under it, rounded down to the cent
        ("1000.00", None, "200.00"),  # no cap: the whole percentage
    ],
)
def test_percent_off_is_capped_by_max_discount(order_amount, max_discount, discount):
    percent = terms("PERCENT_OFF", percent_off=Decimal("20"),
                    max_discount=None if max_discount is None else Decimal(max_discount))

    assert discount_for(percent, Decimal(order_amount)) == Decimal(discount)


@pytest.mark.parametrize(
    ("kind", "value", "order_amount", "discount"),
    [
        ("EXCHANGE", "59.90", "40.00", "40.00"),  # an item worth more than the whole order
        ("EXCHANGE", "59.90", "59.90", "59.90"),
        ("AMOUNT_OFF", "30.00", "29.99", "29.99"),
        ("AMOUNT_OFF", "30.00", "30.01", "30.00"),
    ],
)
def test_discount_never_exceeds_the_order_amount(kind, value, order_amount, discount):
    assert discount_for(terms(kind, face_value=Decimal(value)),
                        Decimal(order_amount)) == Decimal(discount)


def test_full_percentage_with_a_cap_above_the_order_gives_the_order_amount():
    percent = terms("PERCENT_OFF", percent_off=Decimal("100"), max_discount=Decimal("500.00"))

    assert discount_for(percent, Decimal("80.00")) == Decimal("80.00")


@pytest.mark.django_db
def test_exchange_coupon_worth_more_than_the_order_discounts_the_order_amount(clock, ctx):
    coupon = issue(ctx, kind="EXCHANGE", face_value=Decimal("59.90"))

    result = lock_as(coupon, ctx, amount="40.00")

    assert result.discount_amount == Decimal("40.00")
    assert result.lock.order_coupon.discount_amount == Decimal("40.00")

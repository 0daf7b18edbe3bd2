"""Several querysets read in one statement come back as each would have read itself."""

import pytest

from common.reads_together import Read, read_at_once, read_once
from coupons.models import CouponOperation
from refunds.models import RefundCoupon
from tests.console.history import long_history

pytestmark = pytest.mark.django_db


def fields(rows) -> list[tuple]:
    return [tuple(getattr(row, f.attname) for f in row._meta.concrete_fields) for row in rows]


def test_each_queryset_gets_its_own_rows_in_its_own_order_from_one_statement(
        coupon, clock, django_assert_num_queries):
    coupon = long_history(coupon, clock, ledger_rows=31)  # paid and refunded orders among them
    decisions = RefundCoupon.objects.filter(coupon=coupon) \
        .select_related("policy_version__policy").order_by("-id")
    latest = CouponOperation.objects.filter(coupon=coupon).order_by("-to_version")[:5]
    nothing = CouponOperation.objects.filter(pk__in=[])
    expected = [list(decisions), list(latest)]
    assert expected[0] and len(expected[1]) == 5

    with django_assert_num_queries(1):
        read = read_at_once(
            after_sale=Read([decisions], lambda found: found[0]),
            ledger=Read([latest, nothing], lambda found: found))
        policies = [d.policy_version.policy.code for d in read["after_sale"]]  # no query

    assert fields(read["after_sale"]) == fields(expected[0])
    assert policies == [d.policy_version.policy.code for d in expected[0]]
    assert fields(read["ledger"][0]) == fields(expected[1])
    assert read["ledger"][1] == []
    assert isinstance(read["after_sale"][0].facts, dict)  # JSON, as the model reads it


def test_a_read_alone_and_a_read_of_nothing_cost_what_they_need(
        coupon, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert read_once(Read([CouponOperation.objects.none()], lambda found: found)) == [[]]
    with django_assert_num_queries(1):
        shown = read_once(Read([CouponOperation.objects.filter(coupon=coupon)],
                               lambda found: found[0]).then(len))
    assert shown == 1  # the ISSUE

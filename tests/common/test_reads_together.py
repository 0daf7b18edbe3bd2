"""Several querysets read in one statement come back as each would have read itself."""

import pytest
from django.db.models import F

from common.reads_together import First, Read, read_at_once
from coupons.models import CouponOperation
from refunds.models import RefundCoupon
from tests.timeline.history import long_history

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
        assert read_at_once(one=Read([CouponOperation.objects.none()],
                                     lambda found: found)) == {"one": [[]]}
    with django_assert_num_queries(1):
        shown = read_at_once(one=Read([CouponOperation.objects.filter(coupon=coupon)],
                                      lambda found: found[0]).then(len))
    assert shown == {"one": 1}  # the ISSUE


def by_key(rows, descending=False) -> list[tuple]:
    return sorted(((row.created_at, row.pk) for row in rows), reverse=descending)


@pytest.mark.parametrize("descending", [False, True])
def test_a_merged_order_is_cut_to_its_first_rows_and_the_other_reads_are_not(
        coupon, clock, descending, django_assert_num_queries):
    """Two querysets of one merged order (the ledger's LOCKs and the rest, by time then id),
    cut to their first 7 rows together, in the same statement as a read that is not cut."""
    coupon = long_history(coupon, clock, ledger_rows=31)
    order = ["-created_at", "-pk"] if descending else ["created_at", "pk"]
    ledger = CouponOperation.objects.filter(coupon=coupon).order_by(*order)
    keyed = {"at": F("created_at"), "row": F("pk")}
    locks = ledger.filter(op_type="LOCK").annotate(**keyed)
    others = ledger.exclude(op_type="LOCK").annotate(**keyed)
    assert locks.count() > 7 and others.count() > 7

    with django_assert_num_queries(1):
        read = read_at_once(
            merged=Read([locks, others], lambda found: found, First(("at", "row"), 7, descending)),
            whole=Read([ledger], lambda found: found[0]))

    first_locks, first_others = read["merged"]
    assert by_key([*first_locks, *first_others], descending) == by_key(ledger, descending)[:7]
    assert first_locks and first_others  # both sources reach into the first seven
    assert by_key(first_locks, descending) == by_key(locks, descending)[:len(first_locks)]
    assert fields(read["whole"]) == fields(ledger)

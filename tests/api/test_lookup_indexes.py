"""Every support lookup and the scanners' keyset reads are answered from an index.

EXPLAIN on PostgreSQL with sequential scans priced out (`enable_seqscan = off`): a plan that
still reads a whole table has no index it could use. The tables are tiny here; the benchmark
(scripts/benchmarks/bench_commands.py) times the same lookups with a million coupons.
"""

import json
import uuid
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.models import Q

from coupons import selectors
from coupons.api.filters import CouponFilter
from coupons.events.facts import PAYMENT_FACTS, order_payment, orders_paid
from coupons.models import CouponLock, CouponOperation, OrderCoupon, OrderFact, Redemption
from operations.scanners import coupons_due_to_expire, leases_due
from refunds.api.refund_views import RefundFilter
from refunds.models import RefundCoupon
from refunds.selectors import decision_list

pytestmark = pytest.mark.django_db

CURSOR = (datetime(2026, 6, 1, tzinfo=UTC), 41)


@pytest.fixture(autouse=True)
def seq_scans_priced_out():
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")


INDEX_SCANS = {"Index Scan", "Index Only Scan", "Bitmap Index Scan"}
# A few rows each, joined in by key: how the planner reaches them does not grow with traffic.
REFERENCE_TABLES = {"refunds_returnpolicy", "refunds_returnpolicyversion",
                    "coupons_coupontemplate", "coupons_coupontemplateversion"}


def scans(node):
    """Every plan node that reads a table or an index, subplans included."""
    if "Scan" in node["Node Type"]:
        yield node
    for child in node.get("Plans", []):
        yield from scans(child)


def assert_indexed(queryset):
    """Each table is reached through an index searched by a condition: a walk along a whole
    index (which `enable_seqscan = off` may pick instead of a Seq Scan) does not count."""
    [plan] = json.loads(queryset.explain(format="json"))
    reads = [node for node in scans(plan["Plan"])
             if node.get("Relation Name") not in REFERENCE_TABLES]
    unsearched = [
        f"{node['Node Type']} {node.get('Index Name', node.get('Relation Name', ''))}"
        for node in reads
        if node["Node Type"] not in INDEX_SCANS | {"Bitmap Heap Scan"}
        or (node["Node Type"] in INDEX_SCANS and "Index Cond" not in node)
    ]
    assert reads and not unsearched, f"not searched by an index: {unsearched}\n{plan}"


def keyset(due, time_field):
    """A scanner batch read past a cursor, as operations.scanners.scan builds it."""
    return (due().select_for_update(no_key=True, skip_locked=True, of=("self",))
            .filter(Q(**{f"{time_field}__gt": CURSOR[0]})
                    | Q(**{time_field: CURSOR[0], "id__gt": CURSOR[1]}))
            .order_by(time_field, "id")[:100])


LOOKUPS = {
    "coupons by user": lambda: CouponFilter({"user_id": "u1"},
                                            queryset=selectors.coupon_list()).qs[:50],
    "coupons by order, held now or ever": lambda: CouponFilter(
        {"order_id": "order-A"}, queryset=selectors.coupon_list()).qs[:50],
    "leases by order": lambda: CouponLock.objects.filter(order_id="order-A"),
    "order links by order": lambda: OrderCoupon.objects.filter(order_id="order-A"),
    "order facts by order": lambda: OrderFact.objects.filter(order_id="order-A"),
    "an order's payment": lambda: _payment_of("order-A"),
    "paid orders of a scanner batch": lambda: _paid(["order-A", "order-B"]),
    "redemptions by payment": lambda: Redemption.objects.filter(payment_id="pay-1"),
    "redemptions by order": lambda: Redemption.objects.filter(order_id="order-A"),
    "refund decisions by refund": lambda: RefundFilter({"refund_id": "refund-1"},
                                                       queryset=decision_list()).qs[:50],
    "refund decisions by order": lambda: RefundCoupon.objects.filter(order_id="order-A"),
    "lease by lock id": lambda: CouponLock.objects.filter(pk=uuid.uuid4()),
    "ledger rows by lock id": lambda: CouponOperation.objects.filter(lock_id=uuid.uuid4()),
    "a coupon's ledger": lambda: selectors.coupon_operations(coupon_id=1),
    "lease scanner batch": lambda: keyset(leases_due, "lock_expires_at"),
    "expiry scanner batch": lambda: keyset(coupons_due_to_expire, "valid_until"),
}


def _payment_of(order_id):
    """The query coupons.events.facts.order_payment sends (the lease scanner, per paid order)."""
    assert order_payment(order_id) is None
    return OrderFact.objects.filter(order_id=order_id, fact_type__in=PAYMENT_FACTS).order_by(
        "recorded_at", "id")[:1]


def _paid(order_ids):
    """The query of coupons.events.facts.orders_paid (one per lease scanner batch)."""
    assert orders_paid(order_ids) == set()
    return (OrderFact.objects.filter(order_id__in=order_ids, fact_type__in=PAYMENT_FACTS)
            .values_list("order_id", flat=True).distinct())


@pytest.mark.parametrize("lookup", LOOKUPS)
def test_the_lookup_reads_an_index(lookup):
    assert_indexed(LOOKUPS[lookup]())


def test_the_check_fires_on_a_lookup_without_an_index():
    # Ledger rows are not searched by payment id, so nothing indexes it.
    with pytest.raises(AssertionError, match="not searched by an index"):
        assert_indexed(CouponOperation.objects.filter(payment_id="pay-1"))

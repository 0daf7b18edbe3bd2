"""A queue page costs the same few queries however many items wait (one page of 25 shown)."""

from decimal import Decimal

import pytest

from refunds.services import refund_receive
from refunds.services.compensation_decide import approval_plan
from tests.timeline.queue_objects import (
    SYSTEM,
    fresh_coupon,
    late_payment_case,
    pending_decision,
    proposal,
)
from timeline.effects import plan_html

pytestmark = pytest.mark.django_db

# Session, user, groups and permissions, the page's count and rows, the person's saved filters
# and the view log's INSERT (measured: 9).
MAX_QUERIES = 9
# The compensation queue also says what each waiting reversal's Approve would write, from the
# plan the approval executes: what that reads (was it reversed already, did the coupon move
# on since) comes with the page's rows, so no queue costs a query per item.
PER_SHOWN = {"/cases/": 0, "/approvals/": 0, "/compensations/": 0}


@pytest.fixture
def full_queues(template):
    """More items than one page holds, in each queue."""
    for n in range(26):
        pending_decision(fresh_coupon(template), order_id=f"order-R{n}")
        late_payment_case(fresh_coupon(template), order_id=f"order-A{n}")
        proposal(fresh_coupon(template), order_id=f"order-C{n}")


@pytest.mark.parametrize("url", ["/cases/", "/approvals/", "/compensations/"])
def test_a_full_queue_page_takes_a_fixed_number_of_queries(
        signed_in, full_queues, django_assert_max_num_queries, url):
    client = signed_in("operator")
    with django_assert_max_num_queries(MAX_QUERIES + 25 * PER_SHOWN[url]):
        page = client.get(url)
    assert page.status_code == 200
    assert page.content.decode().count('<article class="card queue-item"') == 25
    assert "Page 1 of 2" in page.content.decode()


def test_the_page_previews_each_reversal_from_its_batched_reads_as_the_approval_would(
        signed_in, template, django_assert_max_num_queries):
    """One reversal that would go through, one whose coupon moved on (a refund returned it):
    each Approve says what the approval itself would (read one by one), and the page's
    queries stay those of a page without them."""
    ready = proposal(fresh_coupon(template), order_id="order-1")
    moved_on = proposal(fresh_coupon(template), order_id="order-2")
    refund_receive(refund_id="refund-2", order_id="order-2", payment_id="pay-order-2",
                   refund_amount=Decimal("270.00"), refund_type="FULL", ctx=SYSTEM)
    client = signed_in("operator")

    with django_assert_max_num_queries(MAX_QUERIES):
        page = client.get("/compensations/").content.decode()

    plans = [approval_plan(c, c.coupon) for c in (ready, moved_on)]
    assert [type(plan.refusal).__name__ for plan in plans] == ["NoneType", "VersionConflict"]
    for plan in plans:
        assert plan_html(plan) in page

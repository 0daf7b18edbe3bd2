"""A queue page costs the same few queries however many items wait (one page of 25 shown)."""

import pytest

from tests.console.queue_objects import (
    fresh_coupon,
    late_payment_case,
    pending_decision,
    proposal,
)

pytestmark = pytest.mark.django_db

# Session, user, groups and permissions, the page's count and rows, the person's saved filters
# and the view log's INSERT (measured: 9).
MAX_QUERIES = 9
# The compensation queue also says what each waiting reversal's Approve would write, from the
# plan the approval executes: two reads per reversal shown (was it reversed already, did the
# coupon move on since), one page at most.
PER_SHOWN = {"/cases/": 0, "/approvals/": 0, "/compensations/": 2}


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

"""The coupon page and GET /check cost the same at 20 ledger rows as at 20,000.

Once a signed head covers the history, the first view of a coupon verifies its whole ledger and
leaves a watermark resting on that head; every later view resumes there
(coupons/evidence/check_watermark.py), pages the ledger by version and draws the state path from
the check's replay. So the second view's queries are the same set whatever the
history's length: the counts below are equal, not merely bounded.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from coupons.models import CheckWatermark
from tests.signed_head import sign_head
from tests.timeline.history import bulk_history

pytestmark = pytest.mark.django_db
# Session, the user with their permissions and the header's groups (one query), the coupon
# with its template, the check's watermark and the rows after it, the journal's counts of the
# coupon's evidence rows and the new view record's fold (6); the timeline page's keys and its
# rows, one query for each kind on it (ledger rows, refund decisions, compensations, conflict
# cases, settlements: 6), the ledger's page, after-sale's decisions and compensations (2), the
# conflict cases and the presale settlement (2); the replies' greeting and closing in force (one
# row of the default policy); the view log's INSERT.
PAGE_QUERIES = 16
# The coupon, the check's watermark and the rows after it, the open conflict cases, the
# presale settlement and what waits for a person (3), the latest refund decision (the refund
# answer), the journal's counts and the one new view record's fold (2) (the service client
# comes from its cache).
CHECK_QUERIES = 10


def second_view_queries(client, path: str) -> tuple[int, str]:
    assert client.get(path).status_code == 200  # the first view verifies everything
    with CaptureQueriesContext(connection) as queries:
        answer = client.get(path)
    assert answer.status_code == 200
    return len(queries), answer.content.decode()


@pytest.mark.parametrize("ledger_rows", [21, 20001])
def test_the_page_and_the_check_cost_the_same_at_20_and_20000_rows(
        coupon, clock, signed_in, api, tmp_path, ledger_rows):
    coupon = bulk_history(coupon, clock, ledger_rows=ledger_rows)
    sign_head(tmp_path)

    page_queries, page = second_view_queries(signed_in("support"), f"/coupons/{coupon.pk}/")
    check_queries, body = second_view_queries(api, f"/api/v1/coupons/{coupon.pk}/check")

    assert (page_queries, check_queries) == (PAGE_QUERIES, CHECK_QUERIES)
    assert CheckWatermark.objects.get(coupon=coupon).through_version == ledger_rows
    assert f"v{ledger_rows}" in page
    pages = -(-ledger_rows // 50)
    assert f"page {pages} of {pages}, {ledger_rows} rows" in page
    assert f'"replayed_version":{ledger_rows}' in body and '"ok":true' in body

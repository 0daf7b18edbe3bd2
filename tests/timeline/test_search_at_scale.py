"""A search for a user with very many coupons stays one page of work.

Before: `?q=whale` over 300,000 coupons took 55.6 s: every matching id was loaded, then sent
back twice in a 2.3 MB `pk IN (...)`. The coupons here are copied in SQL from one issued coupon
(the services would take minutes) and removed again at the end, so the after-test ledger check
sees only the honest one. scripts/benchmarks/bench_search.py measures 300,000 on PostgreSQL.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from coupons.models import UserCoupon
from coupons.services import coupon_issue
from tests.app_role import as_owner
from tests.timeline.test_search import SEARCH, coupon_ids_listed
from timeline.search import CappedPaginator

pytestmark = pytest.mark.django_db

COPIES = 3000


def copy_coupon(coupon, copies: int, *, user_id: str) -> None:
    """`copies` rows like `coupon`, for `user_id`, in one INSERT ... SELECT."""
    table = UserCoupon._meta.db_table
    columns = [f.column for f in UserCoupon._meta.get_fields()
               if f.concrete and not f.many_to_many and not f.primary_key]
    select = ", ".join("%s" if column == "user_id" else f"c.{column}" for column in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %s) "
            f"INSERT INTO {table} ({', '.join(columns)}) "
            f"SELECT {select} FROM {table} c, n WHERE c.id = %s",
            [copies, user_id, coupon.pk])


@pytest.fixture
def support(signed_in):
    return signed_in("support")


@pytest.fixture
def whale(template, ctx):
    honest = coupon_issue(template_id=template.pk, user_id="whale", ctx=ctx).coupon
    copy_coupon(honest, COPIES, user_id="whale")
    yield honest
    # The copies have no ledger: gone before the suite's replay check of every coupon. Only the
    # owner may delete coupons (the app role never does).
    with as_owner():
        UserCoupon.objects.filter(user_id="whale").exclude(pk=honest.pk).delete()


def test_a_whales_page_is_a_fixed_few_small_queries_with_a_capped_count(
    support, whale, monkeypatch,
):
    monkeypatch.setattr(CappedPaginator, "cap", 1000)

    with CaptureQueriesContext(connection) as queries:
        answer = support.get(SEARCH, {"q": "whale"})

    page = answer.content.decode()
    assert answer.status_code == 200
    assert "More than 1000 coupons matched as user id" in page
    assert coupon_ids_listed(answer)[0] == whale.pk and len(coupon_ids_listed(answer)) == 25
    assert page.count('<td class="matched">user id <code><mark>whale</mark></code></td>') == 25
    assert len(queries) <= 16  # as tests/timeline/test_search.py counts them
    # No list of ids travels: the longest statement is what matched on one page (25 ids in
    # each kind's arm, about 3,100 characters), never the 3,000 ids (some 15,000).
    assert max(len(q["sql"]) for q in queries.captured_queries) < 4000


def test_the_last_page_under_the_cap_is_reachable_and_past_it_is_a_clear_404(
    support, whale, monkeypatch,
):
    monkeypatch.setattr(CappedPaginator, "cap", 1000)

    last = support.get(SEARCH, {"q": "whale", "page": 41})
    past = support.get(SEARCH, {"q": "whale", "page": 200})

    assert last.status_code == 200 and "of more than 41" in last.content.decode()
    assert past.status_code == 404 and "There is no page 200" in past.content.decode()

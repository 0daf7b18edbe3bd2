"""Statements per command over the API on PostgreSQL (three round trips).

BEGIN, then (a) one statement that claims the Idempotency-Key and, if it was free, locks the
coupon row and reads all the command needs (terms, lease, order link, ledger head, whether
refunds wait for the redemption: coupons/sql/claims.py), then (b) one statement that writes
the compare-and-set, the command's rows and the ledger and outbox rows
(coupons/sql/transitions.py), then (c) the stored answer (run_once, the one place an answer is
stored), then COMMIT. A row lock that had to wait for a concurrent
command on the coupon adds one statement between (a) and (b), which reads the lease, order
link, ledger head and refunds flag again (tests/coupons/concurrency/test_stale_lease_races.py).
The comments' "raw" counts are one statement per row, what the commands sent before the
data-modifying WITH; scripts/benchmarks/bench_commands.py's hand-written cycle sends (a) and (b)
with the answer folded into (b).
The service client is cached (api.authentication), so it costs nothing after the first request.
"""

import pytest

pytestmark = pytest.mark.django_db

ORDER = {"order_id": "order-A", "user_id": "u1", "order_amount": "300.00"}


def post(api, path, body, key):
    response = api.post(f"/api/v1/{path}", body, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code < 300, response.json()
    return response.json()


@pytest.fixture
def warm_api(api, coupon):
    """An API client whose service client is already cached, as in steady traffic."""
    assert api.get(f"/api/v1/coupons/{coupon.pk}").status_code == 200
    return api


@pytest.fixture
def locked(warm_api, coupon):
    answer = post(warm_api, f"coupons/{coupon.pk}/lock", ORDER, "lock-1")
    return {"order_id": "order-A", "lock_token": answer["lock_token"],
            "expected_version": answer["state_version"]}


def test_issue_statements(warm_api, template, django_assert_num_queries):
    # raw 8: BEGIN, claim, the template's current terms, coupon insert, ledger insert, outbox
    # insert, answer, COMMIT.
    with django_assert_num_queries(10):
        post(warm_api, "coupons", {"template_id": template.pk, "user_id": "u9"}, "issue-1")


def test_lock_statements(warm_api, coupon, django_assert_num_queries):
    # raw 10: BEGIN, claim, row lock, lease insert, order link insert, CAS, ledger, outbox,
    # answer, COMMIT. Here: BEGIN, (a), (b), (c), COMMIT.
    with django_assert_num_queries(5):
        post(warm_api, f"coupons/{coupon.pk}/lock", ORDER, "lock-1")


def test_renew_statements(warm_api, coupon, locked, django_assert_num_queries):
    # raw 9: BEGIN, claim, row lock, lease expiry update, CAS, ledger, outbox, answer, COMMIT.
    with django_assert_num_queries(5):
        post(warm_api, f"coupons/{coupon.pk}/renew", {**locked, "lease_seconds": 600}, "renew-1")


def test_redeem_statements(warm_api, coupon, locked, django_assert_num_queries):
    # raw 11: BEGIN, claim, row lock (with the lease's order link), redemption insert, lease
    # end, CAS, ledger, outbox, the read of refunds waiting for this redemption, answer, COMMIT.
    # Here the refunds flag comes with (a).
    with django_assert_num_queries(5):
        post(warm_api, f"coupons/{coupon.pk}/redeem", {**locked, "payment_id": "pay-1"},
             "redeem-1")


def test_release_statements(warm_api, coupon, locked, django_assert_num_queries):
    # raw 9: BEGIN, claim, row lock, lease end, CAS, ledger, outbox, answer, COMMIT.
    with django_assert_num_queries(5):
        post(warm_api, f"coupons/{coupon.pk}/release", {**locked, "reason": "closed"},
             "release-1")


def test_void_statements(warm_api, coupon, django_assert_num_queries):
    # raw 8: BEGIN, claim, row lock, CAS, ledger, outbox, answer, COMMIT.
    with django_assert_num_queries(5):
        post(warm_api, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "risk"},
             "void-1")


def test_a_refusal_is_recorded_with_its_answer_in_one_transaction(
    warm_api, coupon, locked, django_assert_num_queries
):
    # BEGIN, claim with the row lock, rejection row, answer, COMMIT: the command wrote nothing
    # before it was refused, so it needs no savepoint.
    with django_assert_num_queries(5):
        response = warm_api.post(f"/api/v1/coupons/{coupon.pk}/lock",
                                 {**ORDER, "order_id": "order-B"}, format="json",
                                 HTTP_IDEMPOTENCY_KEY="lock-2")
    assert response.json()["error"]["code"] == "INVALID_STATE"


def test_a_replay_reads_the_stored_answer_and_writes_nothing_else(
    warm_api, coupon, django_assert_num_queries
):
    post(warm_api, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "risk"},
         "void-1")
    # BEGIN, claim (finds the record, so locks no coupon), read the stored answer, COMMIT.
    with django_assert_num_queries(4):
        post(warm_api, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "risk"},
             "void-1")

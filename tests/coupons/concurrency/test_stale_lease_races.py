"""A stale lease's REDEEM, RELEASE and RENEW waiting on the coupon row while a new LOCK commits.

Order A's lease was released; order B's LOCK has written and holds the coupon row, not yet
committed, when A's late commands arrive. Their statements start before B's commit, so their
snapshot has the coupon AVAILABLE with no lease; they wait for B's row lock and, once B commits,
PostgreSQL re-checks the coupon row at its new version but hands back the rows joined to it as
the older snapshot had them (no lease). Each must still be refused with a 409, never a 500.
"""

import threading
import time
import uuid

import pytest
from django.db import connection
from rest_framework.test import APIClient

from coupons.models import CouponLock, CouponOperation, LockStatus, UserCoupon
from coupons.services import lock as lock_service
from tests.app_role import as_owner
from tests.coupons.concurrency.threads import race

pytestmark = pytest.mark.django_db(transaction=True)

ORDER_A = {"order_id": "order-A", "user_id": "u1", "order_amount": "300.00"}
ORDER_B = {**ORDER_A, "order_id": "order-B"}


def api_client(key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def post(key, path, body):
    answer = api_client(key).post(f"/api/v1/{path}", body, format="json",
                                  HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))
    return answer.status_code, answer.json()


def waiting_on_locks() -> int:
    """Sessions of the test database waiting for a lock (the owner sees every session's wait:
    the app role sees only its own)."""
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                       " AND wait_event_type = 'Lock'")
        return cursor.fetchone()[0]


def hold_locks(monkeypatch):
    """From now on a LOCK writes, then holds its transaction open until `release` is set."""
    release, written = threading.Event(), threading.Event()
    apply_transition = lock_service.apply_transition

    def and_hold(*args):
        applied = apply_transition(*args)
        written.set()
        assert release.wait(timeout=60)
        return applied

    monkeypatch.setattr(lock_service, "apply_transition", and_hold)
    return release, written


def test_stale_redeem_release_and_renew_racing_a_new_lock_are_refused_with_409(
    coupon, service_client, monkeypatch
):
    key = service_client[1]
    status, a = post(key, f"coupons/{coupon.pk}/lock", ORDER_A)
    assert status == 200
    stale = {"order_id": "order-A", "lock_token": a["lock_token"],
             "expected_version": a["state_version"]}
    assert post(key, f"coupons/{coupon.pk}/release", {**stale, "reason": "closed"})[0] == 200
    release, written = hold_locks(monkeypatch)
    stale_commands = [
        ("redeem", {**stale, "payment_id": "pay-A"}),
        ("release", {**stale, "reason": "closed again"}),
        ("renew", {**stale, "lease_seconds": 600}),
    ]

    def lock_b():
        return post(key, f"coupons/{coupon.pk}/lock", ORDER_B)

    def late(command, body):
        def call():
            assert written.wait(timeout=60)
            return post(key, f"coupons/{coupon.pk}/{command}", body)
        return call

    def open_the_gate():
        # B has written; A's three commands wait on its row lock before B commits.
        assert written.wait(timeout=60)
        deadline = time.monotonic() + 60
        while waiting_on_locks() < len(stale_commands):
            assert time.monotonic() < deadline, "the stale commands never waited on the row"
            time.sleep(0.01)
        release.set()

    outcomes = race(lock_b, *(late(c, body) for c, body in stale_commands), open_the_gate)

    (_, (b_status, b)), *answers, _ = outcomes
    assert b_status == 200, b
    assert [status for _, (status, _) in answers] == [409, 409, 409], answers
    assert {body["error"]["code"] for _, (_, body) in answers} == {"TOKEN_MISMATCH"}
    row = UserCoupon.objects.get(pk=coupon.pk)
    assert (row.status, row.state_version, row.locked_order_id) == ("LOCKED", 4, "order-B")
    assert CouponLock.objects.get(coupon=coupon, status=LockStatus.ACTIVE).order_id == "order-B"
    assert list(CouponOperation.objects.filter(coupon=coupon).order_by("to_version")
                .values_list("op_type", flat=True)) == ["ISSUE", "LOCK", "RELEASE", "LOCK"]

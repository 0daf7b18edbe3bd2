"""The late-payment incident (docs/design.md) as a golden case, told through the HTTP API.

Order A locks the coupon and pays, but the payment callback is late. The order-close job
releases the coupon first; order B locks it; then A's late redeem arrives. Before the fix that
redeem named only the coupon id and marked it USED, so two orders kept one discount. Here it
must be refused without touching B's lease, and leave its refusal where support can see it.
"""

import json

import pytest

from coupons.models import CouponLock, LockStatus, Redemption, UserCoupon
from coupons.write.tokens import hash_token

pytestmark = pytest.mark.django_db

LATE_COMMAND_CODES = {"TOKEN_MISMATCH", "VERSION_CONFLICT"}


class OrderService:
    """What the order and payment services send; every command has its own Idempotency-Key."""

    def __init__(self, api, coupon_id):
        self.api = api
        self.coupon_id = coupon_id
        self.sent = 0

    def post(self, command, body):
        self.sent += 1
        return self.api.post(
            f"/api/v1/coupons/{self.coupon_id}/{command}", body, format="json",
            HTTP_IDEMPOTENCY_KEY=f"incident-{command}-{self.sent}",
        )

    def lock(self, order_id):
        answer = self.post("lock", {"order_id": order_id, "user_id": "u1",
                                    "order_amount": "300.00", "lease_seconds": 900})
        assert answer.status_code == 200, answer.json()
        return answer.json()

    def redeem(self, lease, *, payment_id, expected_version=None):
        return self.post("redeem", {
            "order_id": lease["order_id"], "lock_token": lease["lock_token"],
            "expected_version": expected_version or lease["state_version"],
            "payment_id": payment_id,
        })

    def release(self, lease, *, reason, expected_version=None):
        return self.post("release", {
            "order_id": lease["order_id"], "lock_token": lease["lock_token"],
            "expected_version": expected_version or lease["state_version"], "reason": reason,
        })

    def coupon(self):
        return self.api.get(f"/api/v1/coupons/{self.coupon_id}").json()

    def ledger(self):
        rows = self.api.get(f"/api/v1/coupons/{self.coupon_id}/operations").json()["results"]
        return [(row["op_type"], row["from_version"], row["to_version"], row["order_id"])
                for row in rows]

    def rejections(self):
        answer = self.api.get(f"/api/v1/coupons/{self.coupon_id}/rejections")
        assert answer.status_code == 200
        return answer

    def check(self):
        return self.api.get(f"/api/v1/coupons/{self.coupon_id}/check").json()


@pytest.fixture
def orders(api, template):
    issued = api.post("/api/v1/coupons", {"template_id": template.pk, "user_id": "u1"},
                      format="json", HTTP_IDEMPOTENCY_KEY="incident-issue")
    assert issued.status_code == 201, issued.json()
    return OrderService(api, issued.json()["id"])


def assert_refused(answer, codes, *, state, version):
    assert answer.status_code == 409, answer.json()
    error = answer.json()["error"]
    assert error["code"] in codes
    assert error["details"]["current_state"] == state
    assert error["details"]["current_version"] == version


def assert_no_secret_in(text, *leases):
    for lease in leases:
        assert lease["lock_token"] not in text
        assert hash_token(lease["lock_token"]) not in text


def test_late_redeem_of_a_released_lease_is_refused_and_order_b_keeps_its_lease(
    orders, clock
):
    lease_a = orders.lock("order-A")
    clock.advance(minutes=5)  # A pays; its callback is stuck in a queue
    closed = orders.release(lease_a, reason="order closed: payment window passed")
    assert closed.status_code == 200, closed.json()
    clock.advance(minutes=1)
    lease_b = orders.lock("order-B")
    lock_b = CouponLock.objects.get(pk=lease_b["lock_id"])
    clock.advance(minutes=2)

    late = orders.redeem(lease_a, payment_id="pay-A")

    assert_refused(late, LATE_COMMAND_CODES, state="LOCKED", version=4)
    assert_no_secret_in(late.content.decode(), lease_a, lease_b)
    lock_b_after = CouponLock.objects.get(pk=lock_b.pk)
    assert lock_b_after.status == LockStatus.ACTIVE
    assert lock_b_after.expires_at == lock_b.expires_at
    row = UserCoupon.objects.get(pk=orders.coupon_id)
    assert (row.status, row.state_version, row.current_lock_id, row.locked_order_id) == (
        "LOCKED", 4, lock_b.pk, "order-B"
    )
    assert orders.coupon()["lock_expires_at"] == lease_b["expires_at"]
    assert not Redemption.objects.filter(coupon_id=orders.coupon_id).exists()

    rejections = orders.rejections()
    [refusal] = rejections.json()["results"]
    assert (refusal["op_type"], refusal["order_id"]) == ("REDEEM", "order-A")
    assert refusal["error_code"] == late.json()["error"]["code"]
    assert_no_secret_in(rejections.content.decode(), lease_a, lease_b)

    paid_b = orders.redeem(lease_b, payment_id="pay-B")
    assert paid_b.status_code == 200, paid_b.json()
    assert (paid_b.json()["status"], paid_b.json()["state_version"]) == ("USED", 5)
    [redemption] = Redemption.objects.filter(coupon_id=orders.coupon_id)
    assert (redemption.order_id, redemption.payment_id, redemption.lock_id) == (
        "order-B", "pay-B", lock_b.pk
    )
    assert orders.ledger() == [
        ("ISSUE", 0, 1, ""),
        ("LOCK", 1, 2, "order-A"),
        ("RELEASE", 2, 3, "order-A"),
        ("LOCK", 3, 4, "order-B"),
        ("REDEEM", 4, 5, "order-B"),
    ]
    assert orders.check()["ok"]


def test_late_redeem_with_the_new_version_still_cannot_use_an_old_token(orders):
    """A's service re-read the coupon's version but still holds A's token: still refused."""
    lease_a = orders.lock("order-A")
    orders.release(lease_a, reason="order closed")
    lease_b = orders.lock("order-B")

    late = orders.redeem(lease_a, payment_id="pay-A", expected_version=lease_b["state_version"])

    assert_refused(late, {"TOKEN_MISMATCH"}, state="LOCKED", version=4)
    assert UserCoupon.objects.get(pk=orders.coupon_id).locked_order_id == "order-B"
    assert not Redemption.objects.filter(coupon_id=orders.coupon_id).exists()


def test_retried_late_redeem_gets_the_same_refusal_without_a_second_attempt(orders, api):
    lease_a = orders.lock("order-A")
    orders.release(lease_a, reason="order closed")
    orders.lock("order-B")
    body = {"order_id": "order-A", "lock_token": lease_a["lock_token"],
            "expected_version": lease_a["state_version"], "payment_id": "pay-A"}
    url = f"/api/v1/coupons/{orders.coupon_id}/redeem"

    first = api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="pay-A-callback")
    retry = api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="pay-A-callback")

    assert first.status_code == retry.status_code == 409
    assert retry.json() == first.json()
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert len(orders.rejections().json()["results"]) == 1


def test_late_redeem_before_anyone_relocks_finds_the_coupon_available(orders, clock):
    lease_a = orders.lock("order-A")
    clock.advance(minutes=5)
    closed = orders.release(lease_a, reason="order closed: payment window passed")
    assert closed.status_code == 200, closed.json()
    clock.advance(minutes=1)

    late = orders.redeem(lease_a, payment_id="pay-A")

    assert_refused(late, {"INVALID_STATE"}, state="AVAILABLE", version=3)
    assert_no_secret_in(late.content.decode(), lease_a)
    coupon = orders.coupon()
    assert (coupon["status"], coupon["state_version"], coupon["locked_order_id"]) == (
        "AVAILABLE", 3, None
    )
    assert not Redemption.objects.filter(coupon_id=orders.coupon_id).exists()
    [refusal] = orders.rejections().json()["results"]
    assert (refusal["op_type"], refusal["order_id"], refusal["error_code"]) == (
        "REDEEM", "order-A", "INVALID_STATE"
    )

    lease_b = orders.lock("order-B")
    paid_b = orders.redeem(lease_b, payment_id="pay-B")
    assert paid_b.status_code == 200, paid_b.json()
    assert Redemption.objects.filter(coupon_id=orders.coupon_id).count() == 1
    assert orders.ledger() == [
        ("ISSUE", 0, 1, ""),
        ("LOCK", 1, 2, "order-A"),
        ("RELEASE", 2, 3, "order-A"),
        ("LOCK", 3, 4, "order-B"),
        ("REDEEM", 4, 5, "order-B"),
    ]


def test_late_release_from_order_a_after_order_b_redeemed_changes_nothing(orders, clock):
    lease_a = orders.lock("order-A")
    orders.release(lease_a, reason="order closed")
    lease_b = orders.lock("order-B")
    paid_b = orders.redeem(lease_b, payment_id="pay-B")
    assert paid_b.status_code == 200, paid_b.json()
    redemption = Redemption.objects.get(coupon_id=orders.coupon_id)
    clock.advance(minutes=10)

    late = orders.release(lease_a, reason="order closed (duplicate delivery)")

    assert_refused(late, {"INVALID_STATE"}, state="USED", version=5)
    assert_no_secret_in(late.content.decode(), lease_a, lease_b)
    coupon = orders.coupon()
    assert (coupon["status"], coupon["state_version"]) == ("USED", 5)
    assert list(Redemption.objects.filter(coupon_id=orders.coupon_id)) == [redemption]
    assert Redemption.objects.get(pk=redemption.pk).succeeded
    assert [lock.status for lock in CouponLock.objects.filter(coupon_id=orders.coupon_id)
            .order_by("acquired_version")] == [LockStatus.RELEASED, LockStatus.CONSUMED]
    assert orders.ledger() == [
        ("ISSUE", 0, 1, ""),
        ("LOCK", 1, 2, "order-A"),
        ("RELEASE", 2, 3, "order-A"),
        ("LOCK", 3, 4, "order-B"),
        ("REDEEM", 4, 5, "order-B"),
    ]
    rejections = orders.rejections()
    assert [(r["op_type"], r["order_id"], r["error_code"])
            for r in rejections.json()["results"]] == [("RELEASE", "order-A", "INVALID_STATE")]
    assert_no_secret_in(json.dumps(rejections.json()), lease_a, lease_b)
    assert orders.check()["ok"]

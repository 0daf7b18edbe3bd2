"""Rotating the lease-token key: old leases keep working until their key is removed.

LEASE_TOKEN_SECRETS lists keys current-first; each lock stores the id of the key its token was
made with. The suite starts with one key, k1 (config/test_settings.py).
"""

import base64
import hashlib
import hmac
import uuid

import pytest

from coupons.models import CouponLock
from operations.scanners import scan_leases
from tests.command_checks import ledger
from tests.conftest import lock

pytestmark = pytest.mark.django_db

NEW_SECRET = "rotated-in-lease-token-secret"
ORDER = {"order_id": "A", "user_id": "u1", "order_amount": "300.00"}


@pytest.fixture
def rotate(settings):
    """Make k2 the current key; `keep_old=False` removes k1 as well."""
    old = dict(settings.LEASE_TOKEN_SECRETS)

    def rotate(*, keep_old=True):
        settings.LEASE_TOKEN_SECRETS = {"k2": NEW_SECRET, **(old if keep_old else {})}

    return rotate


def command(api, coupon, op, key=None, **body):
    return api.post(f"/api/v1/coupons/{coupon.pk}/{op}", body, format="json",
                    HTTP_IDEMPOTENCY_KEY=key or str(uuid.uuid4()))


def lock_over_api(api, coupon, key="lock-A") -> dict:
    response = command(api, coupon, "lock", key=key, **ORDER)
    assert response.status_code == 200, response.json()
    return response.json()


def lease(answer: dict, version=None) -> dict:
    return {"order_id": "A", "lock_token": answer["lock_token"],
            "expected_version": version or answer["state_version"]}


def token_mismatch(response, state="LOCKED", version=2):
    assert response.status_code == 409, response.json()
    error = response.json()["error"]
    assert error["code"] == "TOKEN_MISMATCH"
    assert (error["details"]["current_state"], error["details"]["current_version"]) == (
        state, version,
    )
    assert "lock_token" not in response.content.decode()


def test_a_token_from_before_a_rotation_still_renews_and_redeems(api, coupon, rotate):
    answer = lock_over_api(api, coupon)
    rotate()

    renewed = command(api, coupon, "renew", **lease(answer), lease_seconds=600)
    redeemed = command(api, coupon, "redeem", **lease(answer, 3), payment_id="P-A")

    assert renewed.status_code == 200, renewed.json()
    assert redeemed.status_code == 200, redeemed.json()
    assert redeemed.json()["status"] == "USED"
    assert [row[0] for row in ledger(coupon)] == ["ISSUE", "LOCK", "RENEW", "REDEEM"]


def test_a_token_from_before_a_rotation_still_releases(api, coupon, rotate):
    answer = lock_over_api(api, coupon)
    rotate()

    released = command(api, coupon, "release", **lease(answer), reason="order closed")

    assert released.status_code == 200, released.json()
    assert released.json()["status"] == "AVAILABLE"


def test_a_lock_after_the_rotation_uses_the_new_key(api, coupon, rotate):
    old = lock_over_api(api, coupon, key="lock-1")
    command(api, coupon, "release", **lease(old), reason="order closed")
    rotate()

    new = lock_over_api(api, coupon, key="lock-2")

    keys = dict(CouponLock.objects.values_list("pk", "token_key_id"))
    assert keys == {uuid.UUID(old["lock_id"]): "k1", uuid.UUID(new["lock_id"]): "k2"}
    under_new_key = base64.urlsafe_b64encode(hmac.new(
        NEW_SECRET.encode(), b"coupon-lease:" + uuid.UUID(new["lock_id"]).bytes, hashlib.sha256,
    ).digest()).rstrip(b"=").decode()
    assert new["lock_token"] == under_new_key
    assert command(api, coupon, "redeem", **lease(new), payment_id="P-A").status_code == 200


def test_a_replayed_lock_answers_the_token_it_first_gave(api, coupon, rotate):
    first = lock_over_api(api, coupon, key="lock-A")
    rotate()

    replay = command(api, coupon, "lock", key="lock-A", **ORDER)

    assert replay.status_code == 200
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == first
    redeemed = command(api, coupon, "redeem", **lease(replay.json()), payment_id="P-A")
    assert redeemed.status_code == 200, redeemed.json()


@pytest.mark.parametrize("op, extra", [
    ("renew", {"lease_seconds": 600}),
    ("redeem", {"payment_id": "P-A"}),
    ("release", {"reason": "order closed"}),
])
def test_a_token_under_a_removed_key_is_refused(api, coupon, rotate, op, extra):
    answer = lock_over_api(api, coupon)
    rotate(keep_old=False)

    token_mismatch(command(api, coupon, op, **lease(answer), **extra))

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version) == ("LOCKED", 2)


def test_a_replayed_lock_under_a_removed_key_is_refused_not_a_500(api, coupon, rotate):
    lock_over_api(api, coupon, key="lock-A")
    rotate(keep_old=False)

    token_mismatch(command(api, coupon, "lock", key="lock-A", **ORDER))


def test_the_lease_scanner_still_ends_a_lease_whose_key_was_removed(coupon, ctx, clock, rotate):
    lock(coupon, ctx, lease_seconds=60)
    rotate(keep_old=False)
    clock.advance(seconds=61)

    scan_leases()

    coupon.refresh_from_db()
    assert coupon.status == "AVAILABLE"
    assert [row[0] for row in ledger(coupon)] == ["ISSUE", "LOCK", "RELEASE"]


def test_a_token_forged_with_the_old_committed_default_key_is_refused(api, coupon):
    """The reproduced hole: the repository's default SECRET_KEY signed every lease token."""
    answer = lock_over_api(api, coupon)
    forged = base64.urlsafe_b64encode(hmac.new(
        b"dev-only-not-secret-change-me-in-production",
        b"coupon-lease:" + uuid.UUID(answer["lock_id"]).bytes, hashlib.sha256,
    ).digest()).rstrip(b"=").decode()

    refused = command(api, coupon, "redeem", order_id="A", lock_token=forged,
                      expected_version=2, payment_id="P-X")

    token_mismatch(refused)

import pytest

pytestmark = pytest.mark.django_db


def test_lock_then_redeem_over_the_api(api, coupon):
    locked = api.post(f"/api/v1/coupons/{coupon.pk}/lock",
                      {"order_id": "A", "user_id": "u1", "order_amount": "300.00"},
                      format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert locked.status_code == 200, locked.json()
    body = locked.json()
    redeemed = api.post(f"/api/v1/coupons/{coupon.pk}/redeem",
                        {"order_id": "A", "lock_token": body["lock_token"],
                         "expected_version": body["state_version"], "payment_id": "P1"},
                        format="json", HTTP_IDEMPOTENCY_KEY="k2")
    assert redeemed.status_code == 200, redeemed.json()
    assert redeemed.json()["status"] == "USED"
    again = api.post(f"/api/v1/coupons/{coupon.pk}/lock",
                     {"order_id": "A", "user_id": "u1", "order_amount": "300.00"},
                     format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert again.status_code == 200
    assert again.json() == body
    ops = api.get(f"/api/v1/coupons/{coupon.pk}/operations").json()
    assert [o["op_type"] for o in ops["results"]] == ["ISSUE", "LOCK", "REDEEM"]
    check = api.get(f"/api/v1/coupons/{coupon.pk}/check").json()
    assert check["ok"], check

import pytest

from coupons.errors import TokenMismatch
from coupons.services import coupon_redeem
from tests.conftest import lock

pytestmark = pytest.mark.django_db


def test_timeline_merges_ledger_refusals_facts_and_cases_in_time_order(
    api, coupon, ctx, clock, send,
):
    _, proof_a = lock(coupon, ctx, order_id="A")
    clock.advance(minutes=1)
    send("OrderClosed", order_id="A")
    clock.advance(minutes=1)
    _, proof_b = lock(coupon, ctx, order_id="B")
    clock.advance(minutes=1)
    with pytest.raises(TokenMismatch):
        coupon_redeem(coupon_id=coupon.pk, lease=proof_a, payment_id="P-A", ctx=ctx)
    clock.advance(minutes=1)
    send("PaymentSucceeded", order_id="A", payment_id="P-A")

    response = api.get(f"/api/v1/coupons/{coupon.pk}/timeline")

    assert response.status_code == 200
    entries = response.json()
    case_id = entries[-1]["id"]
    titles = [(e["kind"], e["title"]) for e in entries]
    assert titles == [
        ("operation", "ISSUE ∅→AVAILABLE (v1)"),
        ("operation", "LOCK AVAILABLE→LOCKED (v2)"),
        ("fact", "OrderClosed for order A"),
        ("operation", "RELEASE LOCKED→AVAILABLE (v3)"),
        ("operation", "LOCK AVAILABLE→LOCKED (v4)"),
        ("refusal", "REDEEM refused: TOKEN_MISMATCH"),
        ("fact", "PaymentSucceeded for order A"),
        ("refusal", "REDEEM refused: TOKEN_MISMATCH"),
        ("case", f"Conflict case #{case_id} opened: ORDER_DISCOUNT_REFUND"),
    ]
    times = [e["at"] for e in entries]
    assert times == sorted(times)
    assert "lock_token" not in response.content.decode()


def test_timeline_of_an_unknown_coupon_is_not_found(api):
    response = api.get("/api/v1/coupons/999999/timeline")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"

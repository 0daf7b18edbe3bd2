import pytest

from coupons.errors import TokenMismatch
from coupons.services import coupon_redeem, coupon_release
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
    assert response.json()["count"] == 9
    entries = response.json()["results"]
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


def test_timeline_comes_in_pages_that_join_up_in_time_order(api, coupon, ctx, clock):
    for n in range(30):
        result, proof = lock(coupon, ctx, order_id=f"order-{n}")
        coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
        clock.advance(seconds=1)

    first = api.get(f"/api/v1/coupons/{coupon.pk}/timeline?page_size=25").json()
    second = api.get(first["next"]).json()
    third = api.get(second["next"]).json()

    assert first["count"] == 61  # ISSUE, then 30 LOCK + RELEASE pairs
    assert [len(p["results"]) for p in (first, second, third)] == [25, 25, 11]
    assert third["next"] is None
    versions = [e["title"] for p in (first, second, third) for e in p["results"]]
    assert versions[0] == "ISSUE ∅→AVAILABLE (v1)"
    assert versions[-1] == "RELEASE LOCKED→AVAILABLE (v61)"
    assert [int(t.rsplit("(v", 1)[1][:-1]) for t in versions] == list(range(1, 62))


def test_timeline_of_an_unknown_coupon_is_not_found(api):
    response = api.get("/api/v1/coupons/999999/timeline")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_the_schema_documents_the_timeline_as_pages(api):
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()

    get = schema["paths"]["/api/v1/coupons/{coupon_id}/timeline"]["get"]
    page = get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert page == "#/components/schemas/PaginatedTimelineEntryOutputList"
    assert {"page", "page_size"} <= {p["name"] for p in get["parameters"]}

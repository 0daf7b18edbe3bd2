"""GET /api/v1/reconciliation and POST /api/v1/reconciliation/{id}/resolve, as an operator."""

import pytest

from coupons.models import CouponOperation, FactType
from coupons.services import coupon_release
from tests.api.roles import person, signed_in
from tests.conftest import lock
from tests.coupons.safety.breakage import version_gap
from tests.operations.reconciliation.conftest import (
    closed_order_still_locked,
    fact_without_handler,
    reconcile,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator_api(db):
    return signed_in(person("op", group="operator"))


def test_the_list_is_worst_first_and_filters(template, ctx, operator_api, broken_on_purpose):
    closed = closed_order_still_locked(template, ctx)
    gap = version_gap(template, ctx)
    broken_on_purpose.add(gap.pk)
    reconcile()

    every = operator_api.get("/api/v1/reconciliation").json()
    p0 = operator_api.get("/api/v1/reconciliation?severity=P0").json()
    releases = operator_api.get("/api/v1/reconciliation?kind=CLOSED_STILL_LOCKED&status=OPEN")

    assert [(f["severity"], f["kind"]) for f in every["results"]] == [
        ("P0", "LEDGER_GAP"), ("P2", "CLOSED_STILL_LOCKED")]
    assert [f["coupon"] for f in p0["results"]] == [gap.pk]
    assert [f["id"] for f in releases.json()["results"]] == [closed.pk]
    assert releases.json()["results"][0]["repair"] == "RELEASE"


def test_a_bad_filter_is_a_validation_error(operator_api):
    answer = operator_api.get("/api/v1/reconciliation?severity=P9")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "VALIDATION_ERROR"


def test_applying_through_the_api_releases_once_per_key(template, ctx, operator_api):
    finding = closed_order_still_locked(template, ctx)
    url = f"/api/v1/reconciliation/{finding.pk}/resolve"

    first = operator_api.post(url, {"action": "APPLY"}, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    again = operator_api.post(url, {"action": "APPLY"}, format="json", HTTP_IDEMPOTENCY_KEY="k1")

    assert first.status_code == 200, first.json()
    assert first.json()["status"] == "RESOLVED" and first.json()["resolved_by"] == "user:op"
    assert again.json() == first.json()
    releases = CouponOperation.objects.filter(coupon=finding.coupon, op_type="RELEASE")
    assert list(releases.values_list("actor", flat=True)) == ["user:op"]


def test_resolving_a_closed_finding_is_a_409(coupon, ctx, operator_api):
    _, proof = lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)
    reconcile()
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx)
    [finding] = coupon.findings.all()
    reconcile()

    answer = operator_api.post(f"/api/v1/reconciliation/{finding.pk}/resolve",
                               {"action": "DISMISS", "note": "seen"}, format="json",
                               HTTP_IDEMPOTENCY_KEY="k2")

    assert answer.status_code == 409
    assert answer.json()["error"]["details"]["current_state"] == "CLOSED"


def test_an_unknown_finding_is_a_404(operator_api):
    answer = operator_api.post("/api/v1/reconciliation/999/resolve", {"action": "APPLY"},
                               format="json", HTTP_IDEMPOTENCY_KEY="k3")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "NOT_FOUND"

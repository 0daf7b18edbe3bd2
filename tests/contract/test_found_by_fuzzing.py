"""What Schemathesis found, pinned: each was a 500 on PostgreSQL or a schema the server did not
keep."""

import pytest

from coupons.models import IdempotencyRecord
from refunds.models import ReturnPolicy
from tests.refunds.compensations.conftest import staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def policy_admin(db):
    return staff("pat", "policy_admin")


def post(client, path, body, key="k-1"):
    return client.post(f"/api/v1/{path}", body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_a_refund_for_an_order_id_with_a_nul_is_a_400(api):
    response = post(api, "refunds", {"refund_id": "r-1", "order_id": "o\x00", "payment_id": "p",
                                     "refund_amount": "1.00", "refund_type": "FULL"})

    assert response.status_code == 400
    assert "order_id" in response.json()["error"]["details"]


def test_a_rule_label_with_a_nul_is_a_400_and_nothing_is_stored(policy_admin):
    before = ReturnPolicy.objects.count()

    response = post(policy_admin, "return-policies", {
        "code": "nul", "name": "NUL", "rules": [{"label": "a\x00b", "action": "RETURN"}]})

    assert response.status_code == 400
    assert response.json()["error"]["details"]["rules"]["0"]["label"]
    assert ReturnPolicy.objects.count() == before


def test_an_unknown_key_with_a_nul_is_echoed_without_it_and_stored(policy_admin):
    response = post(policy_admin, "return-policies", {
        "code": "nul", "name": "NUL", "rules": [{"label": "a", "action": "RETURN", "k\x00": 1}]})

    assert response.status_code == 400
    assert response.json()["error"]["details"]["rules"]["0"]["k\ufffd"] == ["unknown key"]
    # The refusal is the key's answer, stored: a retry gets it again.
    assert IdempotencyRecord.objects.get(key="k-1").response_status == 400
    again = post(policy_admin, "return-policies", {
        "code": "nul", "name": "NUL", "rules": [{"label": "a", "action": "RETURN", "k\x00": 1}]})
    assert again.json() == response.json()


def test_preview_takes_from_and_to_as_the_schema_names_them(policy_admin):
    path = "return-policies/1/versions/1/preview"

    backwards = policy_admin.post(f"/api/v1/{path}", {
        "from": "2026-06-02T00:00:00Z", "to": "2026-06-01T00:00:00Z"}, format="json")
    wrong_type = policy_admin.post(f"/api/v1/{path}", {"from": 5}, format="json")

    assert backwards.status_code == 400
    assert backwards.json()["error"]["details"] == {"from": ["Must be before to."]}
    assert wrong_type.status_code == 400

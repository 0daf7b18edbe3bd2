"""Idempotency-Key records are sealed with a key the database does not hold (the console's forms:
tests/timeline/test_sealed_forms.py).

Each attack is what the application's database login can send (raw SQL as `coupon_app`,
tests/app_role.py): a stored answer rewritten, a record copied from another client's key, a
record inserted with a made-up seal. The replay refuses each one (409
IDEMPOTENCY_RECORD_INVALID) before anything is derived from its answer: no lease token is
disclosed. A genuine replay still answers the first result.
"""

import hashlib
import json
from types import SimpleNamespace

import pytest
from django.db import connection
from rest_framework.test import APIClient

from coupons.models import IdempotencyRecord
from coupons.services import coupon_issue, service_client_create
from coupons.write.idempotency_seal import record_seal, request_fingerprint, seal_holds
from tests.conftest import ALL_GRANTS

pytestmark = pytest.mark.django_db

ORDER = {"order_id": "order-A", "user_id": "u1", "order_amount": "300.00"}


def raw(sql, *params) -> int:
    """As the application role: what a stolen DATABASE_URL can send."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def client_named(name):
    client, key = service_client_create(name=name, **ALL_GRANTS)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client, api


def lock(api, coupon, key, **body):
    return api.post(f"/api/v1/coupons/{coupon.pk}/lock", {**ORDER, **body}, format="json",
                    HTTP_IDEMPOTENCY_KEY=key)


def refused(response):
    assert response.status_code == 409, response.content
    body = response.json()
    assert body["error"]["code"] == "IDEMPOTENCY_RECORD_INVALID"
    assert "lock_token" not in response.content.decode()
    return body


@pytest.fixture
def two_clients(db, clock):
    return client_named("order-service"), client_named("other-service")


@pytest.fixture
def second_coupon(template, ctx):
    return coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon


def test_a_genuine_replay_still_answers_the_first_result(two_clients, coupon):
    (_, api), _ = two_clients
    first = lock(api, coupon, "lock-1")
    again = lock(api, coupon, "lock-1")

    assert first.status_code == again.status_code == 200
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    record = IdempotencyRecord.objects.get(key="lock-1")
    assert record.seal and record.seal.startswith(":")


def test_a_stored_answer_pointed_at_another_clients_lock_discloses_no_token(
        two_clients, coupon, second_coupon):
    (_, alice), (bob_client, bob) = two_clients
    theirs = lock(alice, coupon, "a-1").json()
    lock(bob, second_coupon, "b-1")
    assert raw("UPDATE coupons_idempotencyrecord SET response_body = jsonb_set(response_body, "
               "'{lock_id}', to_jsonb(%s::text)) WHERE scope = %s AND key = 'b-1'",
               theirs["lock_id"], bob_client.idempotency_scope) == 1

    answer = lock(bob, second_coupon, "b-1")

    refused(answer)
    assert theirs["lock_token"] not in answer.content.decode()


def test_a_completed_record_inserted_with_a_made_up_seal_is_refused(two_clients, coupon,
                                                                     second_coupon):
    (_, alice), (bob_client, bob) = two_clients
    theirs = lock(alice, coupon, "a-1").json()
    path = f"/api/v1/coupons/{second_coupon.pk}/lock"
    # The strongest attacker: the right scope, key and request fingerprint, a forged answer.
    forged = {**theirs, "lock_token": None}
    raw("INSERT INTO coupons_idempotencyrecord (scope, key, request_hash, status, "
        "response_status, response_body, claimed_at, completed_at, seal) "
        "VALUES (%s, 'b-2', %s, 'COMPLETED', 200, %s, now(), now(), %s)",
        bob_client.idempotency_scope, request_fingerprint("POST", path, ORDER),
        json.dumps(forged), ":" + "0" * 64)

    answer = lock(bob, second_coupon, "b-2")

    refused(answer)
    assert theirs["lock_token"] not in answer.content.decode()


def test_a_record_copied_from_another_clients_key_is_refused(two_clients, coupon):
    (alice_client, alice), (bob_client, bob) = two_clients
    theirs = lock(alice, coupon, "a-1").json()
    # Copied whole, seal included, under the other client's scope: the same path and body
    # make the same request fingerprint, so only the seal tells them apart.
    assert raw("INSERT INTO coupons_idempotencyrecord (scope, key, request_hash, status, "
               "response_status, response_body, claimed_at, completed_at, seal) "
               "SELECT %s, key, request_hash, status, response_status, response_body, "
               "claimed_at, completed_at, seal FROM coupons_idempotencyrecord "
               "WHERE scope = %s AND key = 'a-1'",
               bob_client.idempotency_scope, alice_client.idempotency_scope) == 1

    answer = lock(bob, coupon, "a-1")

    refused(answer)
    assert theirs["lock_token"] not in answer.content.decode()


def test_a_record_without_a_seal_is_never_replayed(two_clients, coupon):
    (client, api), _ = two_clients
    lock(api, coupon, "lock-1")
    raw("UPDATE coupons_idempotencyrecord SET seal = '' WHERE key = 'lock-1'")

    refused(lock(api, coupon, "lock-1"))


def test_a_redeem_answer_sealed_whole_replays_and_refuses_an_edit(
        two_clients, coupon):
    (_, api), _ = two_clients
    locked = lock(api, coupon, "lock-1").json()
    body = {"order_id": "order-A", "lock_token": locked["lock_token"],
            "expected_version": locked["state_version"], "payment_id": "pay-1"}

    def redeem():
        return api.post(f"/api/v1/coupons/{coupon.pk}/redeem", body, format="json",
                        HTTP_IDEMPOTENCY_KEY="redeem-1")

    first = redeem()
    assert first.status_code == 200 and redeem().json() == first.json()
    # Stored once the redemption has its id, so the seal covers all of it (names no key).
    assert IdempotencyRecord.objects.get(key="redeem-1").seal.startswith(":")
    raw("UPDATE coupons_idempotencyrecord SET response_body = jsonb_set(response_body, "
        "'{status}', '\"AVAILABLE\"') WHERE key = 'redeem-1'")

    refused(redeem())


def test_the_request_fingerprint_is_keyed(settings):
    unkeyed = hashlib.sha256(json.dumps(["POST", "/p", ORDER], sort_keys=True,
                                        separators=(",", ":")).encode()).hexdigest()
    first = request_fingerprint("POST", "/p", ORDER)
    settings.IDEMPOTENCY_SEAL_SECRET = "another-idempotency-seal-secret-of-32-bytes"

    assert first != unkeyed
    assert request_fingerprint("POST", "/p", ORDER) != first
    seal = {"scope": "client:1", "key": "k", "request_hash": first, "status": "IN_PROGRESS"}
    assert record_seal(**seal) != record_seal(**{**seal, "scope": "client:2"})


def test_an_answer_an_earlier_release_sealed_without_a_new_row_s_id_still_holds():
    body = {"redemption_id": 7, "status": "USED"}
    record = SimpleNamespace(scope="client:1", key="k", request_hash="h", status="COMPLETED",
                             response_status=200, response_body=body)
    record.seal = record_seal(scope="client:1", key="k", request_hash="h", status="COMPLETED",
                              response_status=200, response_body=body,
                              filled=("redemption_id",))

    assert record.seal.startswith("redemption_id:") and seal_holds(record)
    record.response_body = {**body, "status": "AVAILABLE"}
    assert not seal_holds(record)

import json
import re
import uuid
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from config import api_urls
from coupons.models import (
    CommandRejection,
    CouponLock,
    CouponOperation,
    IdempotencyRecord,
    OutboxEvent,
    ServiceClient,
    UserCoupon,
)
from coupons.services import coupon_issue, service_client_create, template_create
from coupons.write.idempotency_seal import record_seal, request_fingerprint
from tests.conftest import ALL_GRANTS, START

pytestmark = pytest.mark.django_db

ORDER = {"order_id": "A", "user_id": "u1", "order_amount": "300.00"}
TEMPLATE = {"code": "off30", "name": "30 off 200", "kind": "AMOUNT_OFF", "face_value": "30.00",
            "min_order_amount": "200.00", "valid_days": 30}


def post(client, path, body, *, key=None):
    return client.post(f"/api/v1/{path}", body, format="json",
                       HTTP_IDEMPOTENCY_KEY=key or str(uuid.uuid4()))


def ok(response, status=200) -> dict:
    assert response.status_code == status, response.content
    return response.json()


def error(response, status, code) -> dict:
    """Assert an error body (docs/api.md) and answer its `details`."""
    assert response.status_code == status, response.content
    body = response.json()
    assert list(body) == ["error"]
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    return body["error"]["details"]


def conflict(response, code, state, version) -> dict:
    details = error(response, 409, code)
    assert (details["current_state"], details["current_version"]) == (state, version)
    return details


def is_iso_with_offset(value) -> bool:
    return datetime.fromisoformat(value).utcoffset() is not None


def lock(api, coupon, **body) -> dict:
    return ok(post(api, f"coupons/{coupon.pk}/lock", {**ORDER, **body}))


def proof(locked, **overrides) -> dict:
    return {"order_id": locked["order_id"], "lock_token": locked["lock_token"],
            "expected_version": locked["state_version"], **overrides}


def other_client(name="payment-service"):
    client = APIClient()
    key = service_client_create(name=name, **ALL_GRANTS)[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def counts() -> tuple:
    return (UserCoupon.objects.count(), CouponOperation.objects.count(),
            OutboxEvent.objects.count())


# --- templates ----------------------------------------------------------------------------


def test_create_template_answers_201_with_id_version_and_decimal_strings(api):
    body = ok(post(api, "templates", TEMPLATE), 201)

    assert body["id"] > 0 and body["version"] == 1
    assert (body["face_value"], body["min_order_amount"]) == ("30.00", "200.00")
    assert (body["percent_off"], body["max_discount"], body["valid_until"]) == (None, None, None)
    assert (body["returnable"], body["expiry_during_lock"]) == (True, "LOCK_HONORS")
    assert is_iso_with_offset(body["created_at"])
    assert ok(api.get(f"/api/v1/templates/{body['id']}")) == body


def test_invalid_template_is_a_400_and_a_retry_gets_the_same_answer(api):
    key = "template-1"
    first = post(api, "templates", {**TEMPLATE, "face_value": None}, key=key)
    again = post(api, "templates", {**TEMPLATE, "face_value": None}, key=key)

    assert set(error(first, 400, "VALIDATION_ERROR")) == {"face_value"}
    assert again.json() == first.json()
    assert again.status_code == 400
    assert again["Idempotent-Replayed"] == "true"


def test_duplicate_template_code_is_a_409_naming_the_existing_template(api):
    first = ok(post(api, "templates", TEMPLATE), 201)

    assert error(post(api, "templates", TEMPLATE), 409, "ALREADY_EXISTS") == {
        "code": "off30", "template_id": first["id"], "current_version": 1,
    }


def test_template_list_is_paginated(api, template):
    body = ok(api.get("/api/v1/templates"))

    assert body["count"] == 1
    assert body["results"][0]["code"] == "off30"


# --- issue and read -----------------------------------------------------------------------

COUPON_FIELDS = {"id", "user_id", "template_id", "template_version", "status", "state_version",
                 "valid_from", "valid_until", "issued_at", "locked_order_id", "lock_expires_at"}


def test_issue_answers_201_with_the_coupon(api, template):
    body = ok(post(api, "coupons", {"template_id": template.pk, "user_id": "u9"}), 201)

    assert set(body) == COUPON_FIELDS
    assert (body["user_id"], body["template_id"], body["template_version"]) == (
        "u9", template.pk, 1,
    )
    assert (body["status"], body["state_version"]) == ("AVAILABLE", 1)
    assert body["valid_until"] == "2026-07-01T12:00:00Z"
    assert all(is_iso_with_offset(body[f]) for f in ("valid_from", "valid_until", "issued_at"))
    assert ok(api.get(f"/api/v1/coupons/{body['id']}")) == body


def test_issue_replay_answers_the_same_coupon_without_a_second_one(api, template):
    request = {"template_id": template.pk, "user_id": "u9"}
    first = post(api, "coupons", request, key="grant-1")
    again = post(api, "coupons", request, key="grant-1")

    assert again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert UserCoupon.objects.count() == 1


def test_issue_from_an_unknown_template_is_404(api, clock):
    response = post(api, "coupons", {"template_id": 777, "user_id": "u1"})

    assert error(response, 404, "NOT_FOUND") == {"template_id": 777}
    assert UserCoupon.objects.count() == 0
    assert CommandRejection.objects.get().error_code == "NOT_FOUND"


def test_unknown_coupon_is_404(api, clock):
    assert error(api.get("/api/v1/coupons/4242"), 404, "NOT_FOUND") == {"coupon_id": 4242}
    error(api.get("/api/v1/coupons/4242/operations"), 404, "NOT_FOUND")
    error(api.get("/api/v1/coupons/4242/check"), 404, "NOT_FOUND")


# --- lock ---------------------------------------------------------------------------------


def test_lock_answers_the_lease_with_its_token(api, coupon):
    body = lock(api, coupon, quote_id="Q1")

    assert set(body) == {"coupon_id", "lock_id", "lock_token", "order_id", "state_version",
                         "expires_at", "status", "discount_amount"}
    assert (body["coupon_id"], body["order_id"], body["status"]) == (coupon.pk, "A", "LOCKED")
    assert body["state_version"] == 2
    assert body["discount_amount"] == "30.00"
    assert body["expires_at"] == "2026-06-01T12:15:00Z"
    assert uuid.UUID(body["lock_id"])
    assert len(body["lock_token"]) >= 40
    coupon_now = ok(api.get(f"/api/v1/coupons/{coupon.pk}"))
    assert (coupon_now["status"], coupon_now["locked_order_id"]) == ("LOCKED", "A")
    assert coupon_now["lock_expires_at"] == body["expires_at"]


def test_lock_honours_lease_seconds_and_lease_until(api, template, ctx):
    first = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    second = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    assert lock(api, first, lease_seconds=120)["expires_at"] == "2026-06-01T12:02:00Z"
    until = lock(api, second, lease_until="2026-06-20T08:00:00+08:00")["expires_at"]
    assert until == "2026-06-20T00:00:00Z"


def test_lock_replay_answers_the_same_lock_token(api, coupon):
    first = post(api, f"coupons/{coupon.pk}/lock", ORDER, key="quote-1")
    again = post(api, f"coupons/{coupon.pk}/lock", ORDER, key="quote-1")

    assert again.status_code == 200
    assert again.json() == first.json()
    assert again.json()["lock_token"] == first.json()["lock_token"]
    assert CouponLock.objects.count() == 1
    assert [o.op_type for o in CouponOperation.objects.filter(coupon=coupon)] == ["ISSUE", "LOCK"]


def test_lock_token_is_never_stored_with_the_idempotency_key(api, coupon):
    body = lock(api, coupon)

    stored = IdempotencyRecord.objects.get()
    assert stored.status == "COMPLETED" and stored.response_status == 200
    assert "lock_token" not in stored.response_body
    assert body["lock_token"] not in json.dumps(stored.response_body)
    assert CouponLock.objects.get().token_hash not in json.dumps(stored.response_body)


def test_lock_of_a_locked_coupon_is_409_with_current_state(api, coupon):
    lock(api, coupon)

    response = post(api, f"coupons/{coupon.pk}/lock", {**ORDER, "order_id": "B"})

    assert conflict(response, "INVALID_STATE", "LOCKED", 2)["operation"] == "LOCK"


@pytest.mark.parametrize(
    ("change", "advance_days", "code"),
    [
        ({"user_id": "u2"}, 0, "NOT_COUPON_OWNER"),
        ({"order_amount": "199.99"}, 0, "THRESHOLD_NOT_MET"),
        ({}, 31, "COUPON_EXPIRED"),
    ],
)
def test_lock_business_refusals_are_422(api, coupon, clock, change, advance_days, code):
    clock.advance(days=advance_days)
    before = counts()

    response = post(api, f"coupons/{coupon.pk}/lock", {**ORDER, **change})

    error(response, 422, code)
    assert counts() == before


def test_lock_before_the_window_opens_is_422_not_yet_valid(api, ctx, clock):
    template = template_create(code="later", name="later", kind="AMOUNT_OFF",
                               face_value=Decimal("5.00"), valid_from=START + timedelta(days=1),
                               valid_until=START + timedelta(days=2))
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    response = post(api, f"coupons/{coupon.pk}/lock", ORDER)

    assert error(response, 422, "COUPON_NOT_YET_VALID") == {"valid_from": "2026-06-02T12:00:00Z"}


def test_lock_of_an_unknown_coupon_is_404(api, clock):
    assert error(post(api, "coupons/31337/lock", ORDER), 404, "NOT_FOUND") == {"coupon_id": 31337}


# --- renew, redeem, release ---------------------------------------------------------------


def test_renew_answers_the_new_version_and_lease_end(api, coupon, clock):
    locked = lock(api, coupon)
    clock.advance(minutes=10)

    body = ok(post(api, f"coupons/{coupon.pk}/renew", proof(locked, lease_seconds=600)))

    assert body == {"coupon_id": coupon.pk, "state_version": 3,
                    "expires_at": "2026-06-01T12:20:00Z", "status": "LOCKED"}


def test_redeem_answers_the_redemption(api, coupon):
    locked = lock(api, coupon)

    body = ok(post(api, f"coupons/{coupon.pk}/redeem", proof(locked, payment_id="P1")))

    assert body["redemption_id"] > 0
    assert (body["state_version"], body["status"], body["already_redeemed"]) == (3, "USED", False)
    assert (body["order_id"], body["payment_id"], body["discount_amount"]) == ("A", "P1", "30.00")


def test_redeem_asked_again_by_the_same_order_under_a_new_key_answers_the_same_redemption(
    api, coupon,
):
    locked = lock(api, coupon)
    first = ok(post(api, f"coupons/{coupon.pk}/redeem", proof(locked, payment_id="P1")))

    again = ok(post(api, f"coupons/{coupon.pk}/redeem", proof(locked, payment_id="P1")))

    assert again == {**first, "already_redeemed": True}
    assert CouponOperation.objects.filter(op_type="REDEEM").count() == 1


def test_release_answers_the_coupon_back_available(api, coupon):
    locked = lock(api, coupon)

    body = ok(post(api, f"coupons/{coupon.pk}/release", proof(locked, reason="closed")))

    assert body == {"coupon_id": coupon.pk, "state_version": 3, "status": "AVAILABLE"}
    assert ok(api.get(f"/api/v1/coupons/{coupon.pk}"))["locked_order_id"] is None


def test_void_answers_void(api, coupon):
    body = ok(post(api, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "risk"}))

    assert body == {"coupon_id": coupon.pk, "state_version": 2, "status": "VOID"}


def test_late_redeem_under_a_strict_template_is_422_and_the_coupon_ends_expired(api, ctx,
                                                                              clock):
    template = template_create(code="strict", name="strict", kind="AMOUNT_OFF",
                               face_value=Decimal("30.00"), valid_days=30,
                               expiry_during_lock="STRICT")
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    locked = lock(api, coupon, lease_until="2026-07-15T00:00:00Z")
    clock.advance(days=31)

    first = post(api, f"coupons/{coupon.pk}/redeem", proof(locked, payment_id="P1"), key="pay")
    again = post(api, f"coupons/{coupon.pk}/redeem", proof(locked, payment_id="P1"), key="pay")

    assert error(first, 422, "COUPON_EXPIRED") == {
        "valid_until": "2026-07-01T12:00:00Z", "current_state": "EXPIRED", "current_version": 3,
    }
    assert (again.status_code, again.json()) == (422, first.json())
    rows = ok(api.get(f"/api/v1/coupons/{coupon.pk}/operations"))["results"]
    assert [(r["op_type"], r["to_state"]) for r in rows] == [
        ("ISSUE", "AVAILABLE"), ("LOCK", "LOCKED"), ("RELEASE", "EXPIRED"),
    ]


LEASE_COMMANDS = {
    "renew": {"lease_seconds": 60},
    "redeem": {"payment_id": "P1"},
    "release": {"reason": "closed"},
}


@pytest.mark.parametrize("command", list(LEASE_COMMANDS))
def test_lease_commands_answer_409_with_the_current_state(api, coupon, command):
    locked = lock(api, coupon)
    path, extra = f"coupons/{coupon.pk}/{command}", LEASE_COMMANDS[command]
    before = counts()

    conflict(post(api, path, proof(locked, lock_token="forged", **extra)),
             "TOKEN_MISMATCH", "LOCKED", 2)
    conflict(post(api, path, proof(locked, order_id="B", **extra)), "ORDER_MISMATCH", "LOCKED", 2)
    details = conflict(post(api, path, proof(locked, expected_version=9, **extra)),
                       "VERSION_CONFLICT", "LOCKED", 2)
    assert details["expected_version"] == 9
    assert counts() == before


@pytest.mark.parametrize("command", list(LEASE_COMMANDS))
def test_lease_commands_on_an_unlocked_coupon_answer_409_invalid_state(api, coupon, command):
    locked = lock(api, coupon)
    ok(post(api, f"coupons/{coupon.pk}/release", proof(locked)))

    response = post(api, f"coupons/{coupon.pk}/{command}",
                    proof(locked, expected_version=3, **LEASE_COMMANDS[command]))

    conflict(response, "INVALID_STATE", "AVAILABLE", 3)


def test_stale_token_after_a_relock_answers_token_mismatch_whatever_order_it_names(api, coupon):
    stale = lock(api, coupon)
    ok(post(api, f"coupons/{coupon.pk}/release", proof(stale)))
    lock(api, coupon, order_id="B")

    for order_id in ("A", "B"):
        response = post(api, f"coupons/{coupon.pk}/redeem",
                        proof(stale, order_id=order_id, expected_version=4, payment_id="P"))
        conflict(response, "TOKEN_MISMATCH", "LOCKED", 4)


def test_void_with_a_stale_version_is_409(api, coupon):
    lock(api, coupon)

    response = post(api, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "risk"})

    assert conflict(response, "VERSION_CONFLICT", "LOCKED", 2)["expected_version"] == 1


def test_void_twice_is_409_invalid_state(api, coupon):
    ok(post(api, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "risk"}))

    response = post(api, f"coupons/{coupon.pk}/void", {"expected_version": 2, "reason": "risk"})

    conflict(response, "INVALID_STATE", "VOID", 2)


# --- history ------------------------------------------------------------------------------


def test_operations_list_the_ledger_oldest_first_with_who_and_which_key(api, coupon):
    locked = ok(post(api, f"coupons/{coupon.pk}/lock", ORDER, key="quote-1"))
    ok(post(api, f"coupons/{coupon.pk}/redeem", proof(locked, payment_id="P1"), key="pay-1"))

    rows = ok(api.get(f"/api/v1/coupons/{coupon.pk}/operations"))["results"]

    assert [(r["op_type"], r["from_state"], r["to_state"], r["from_version"], r["to_version"])
            for r in rows] == [
        ("ISSUE", "", "AVAILABLE", 0, 1),
        ("LOCK", "AVAILABLE", "LOCKED", 1, 2),
        ("REDEEM", "LOCKED", "USED", 2, 3),
    ]
    lock_row, redeem_row = rows[1], rows[2]
    assert (lock_row["actor"], lock_row["idempotency_key"]) == ("client:order-service", "quote-1")
    assert lock_row["lock_id"] == redeem_row["lock_id"] == locked["lock_id"]
    assert (redeem_row["order_id"], redeem_row["payment_id"]) == ("A", "P1")
    assert all(is_iso_with_offset(r["created_at"]) for r in rows)


def test_rejections_list_what_was_refused_and_why(api, coupon):
    locked = lock(api, coupon)
    post(api, f"coupons/{coupon.pk}/redeem", proof(locked, order_id="B", payment_id="P"),
         key="pay-x")

    rows = ok(api.get(f"/api/v1/coupons/{coupon.pk}/rejections"))["results"]

    assert [(r["op_type"], r["order_id"], r["error_code"], r["actor"]) for r in rows] == [
        ("REDEEM", "B", "ORDER_MISMATCH", "client:order-service"),
    ]
    assert rows[0]["details"] == {"current_state": "LOCKED", "current_version": 2}


def test_check_endpoint_reports_every_invariant_holding(api, coupon):
    locked = lock(api, coupon)
    ok(post(api, f"coupons/{coupon.pk}/redeem", proof(locked, payment_id="P1")))

    body = ok(api.get(f"/api/v1/coupons/{coupon.pk}/check"))

    assert (body["ok"], body["replayed_state"], body["replayed_version"]) == (True, "USED", 3)
    assert [i["number"] for i in body["invariants"]] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert all(i["ok"] for i in body["invariants"])
    assert body["notes"] == []


# --- secrets never leak -------------------------------------------------------------------


def test_no_lock_token_or_hash_appears_in_errors_reads_logs_or_stored_answers(api, coupon):
    stale = lock(api, coupon)
    answers = []
    for command, extra in LEASE_COMMANDS.items():
        for wrong in ({"order_id": "B"}, {"expected_version": 7}, {"lock_token": "x" * 43}):
            answers.append(post(api, f"coupons/{coupon.pk}/{command}",
                                proof(stale, **wrong, **extra)))
    ok(post(api, f"coupons/{coupon.pk}/release", proof(stale)))
    current = lock(api, coupon, order_id="B")
    for command, extra in LEASE_COMMANDS.items():
        answers.append(post(api, f"coupons/{coupon.pk}/{command}",
                            proof(stale, expected_version=4, **extra)))
    answers.append(post(api, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "r"}))
    answers.append(post(api, f"coupons/{coupon.pk}/lock", ORDER))
    for path in ("", "/operations", "/rejections", "/check"):
        answers.append(api.get(f"/api/v1/coupons/{coupon.pk}{path}"))
    answers.append(api.get("/api/v1/coupons?order_id=B"))

    secrets = {stale["lock_token"], current["lock_token"],
               *CouponLock.objects.values_list("token_hash", flat=True)}
    assert len(secrets) == 4
    assert sum(a.status_code >= 400 for a in answers) == 14
    published = [a.content.decode() for a in answers]
    published += [json.dumps(r.details) + r.message for r in CommandRejection.objects.all()]
    published += [json.dumps(r.response_body) for r in IdempotencyRecord.objects.all()]
    published += [json.dumps(e.payload) for e in OutboxEvent.objects.all()]
    for text in published:
        assert not any(secret in text for secret in secrets), text


# --- idempotency --------------------------------------------------------------------------


def test_same_key_with_a_different_body_is_422_and_changes_nothing(api, coupon):
    post(api, f"coupons/{coupon.pk}/lock", ORDER, key="quote-1")
    before = counts()

    response = post(api, f"coupons/{coupon.pk}/lock", {**ORDER, "order_amount": "301.00"},
                    key="quote-1")

    assert error(response, 422, "IDEMPOTENCY_KEY_REUSED") == {}
    assert counts() == before


def test_same_key_and_body_for_another_coupon_is_422(api, template, coupon, ctx):
    other = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    post(api, f"coupons/{coupon.pk}/lock", ORDER, key="quote-1")

    response = post(api, f"coupons/{other.pk}/lock", ORDER, key="quote-1")

    error(response, 422, "IDEMPOTENCY_KEY_REUSED")
    assert UserCoupon.objects.get(pk=other.pk).status == "AVAILABLE"


@pytest.mark.parametrize("header", [None, "", "   "])
def test_command_without_an_idempotency_key_is_400(api, coupon, header):
    extra = {} if header is None else {"HTTP_IDEMPOTENCY_KEY": header}
    before = counts()

    response = api.post(f"/api/v1/coupons/{coupon.pk}/lock", ORDER, format="json", **extra)

    error(response, 400, "IDEMPOTENCY_KEY_MISSING")
    assert counts() == before
    assert not IdempotencyRecord.objects.exists()


def test_idempotency_keys_are_scoped_per_client(api, template):
    payments = other_client()
    request = {"template_id": template.pk, "user_id": "u1"}

    mine = ok(post(api, "coupons", request, key="shared-key"), 201)
    theirs = ok(post(payments, "coupons", request, key="shared-key"), 201)
    ok(post(payments, "coupons", {**request, "user_id": "u2"}, key="k2"), 201)
    other_body = post(api, "coupons", {**request, "user_id": "u3"}, key="k2")

    assert mine["id"] != theirs["id"]
    assert ok(other_body, 201)["user_id"] == "u3"
    assert UserCoupon.objects.count() == 4
    actors = set(CouponOperation.objects.values_list("actor", flat=True))
    assert actors == {"client:order-service", "client:payment-service"}


def test_a_retried_refusal_answers_the_stored_refusal_even_after_the_state_changed(api, coupon):
    locked = lock(api, coupon)
    first = post(api, f"coupons/{coupon.pk}/lock", {**ORDER, "order_id": "B"}, key="quote-B")
    ok(post(api, f"coupons/{coupon.pk}/release", proof(locked)))

    again = post(api, f"coupons/{coupon.pk}/lock", {**ORDER, "order_id": "B"}, key="quote-B")

    conflict(again, "INVALID_STATE", "LOCKED", 2)
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert CommandRejection.objects.count() == 1
    assert UserCoupon.objects.get(pk=coupon.pk).status == "AVAILABLE"


def test_a_key_still_in_progress_is_409_until_its_claim_times_out(api, coupon, service_client,
                                                                   clock):
    path = f"/api/v1/coupons/{coupon.pk}/lock"
    claim = {"scope": service_client[0].idempotency_scope, "key": "busy",
             "request_hash": request_fingerprint("POST", path, ORDER), "status": "IN_PROGRESS"}
    IdempotencyRecord.objects.create(**claim, seal=record_seal(**claim), claimed_at=clock.now())

    error(post(api, f"coupons/{coupon.pk}/lock", ORDER, key="busy"), 409,
          "IDEMPOTENCY_REQUEST_IN_PROGRESS")
    assert UserCoupon.objects.get(pk=coupon.pk).status == "AVAILABLE"

    clock.advance(seconds=61)
    assert ok(post(api, f"coupons/{coupon.pk}/lock", ORDER, key="busy"))["status"] == "LOCKED"


# --- authentication and permission --------------------------------------------------------


@pytest.mark.parametrize(
    "authorization", [None, "Token not-a-key", "Token", "Bearer abc", "Token a b"],
)
def test_callers_without_a_valid_key_get_401(coupon, authorization):
    client = APIClient()
    if authorization:
        client.credentials(HTTP_AUTHORIZATION=authorization)
    before = counts()

    error(client.get(f"/api/v1/coupons/{coupon.pk}"), 401, "NOT_AUTHENTICATED")
    error(post(client, f"coupons/{coupon.pk}/lock", ORDER), 401, "NOT_AUTHENTICATED")
    assert counts() == before


def test_an_inactive_client_gets_401(api, service_client, coupon):
    ServiceClient.objects.filter(pk=service_client[0].pk).update(is_active=False)

    error(api.get(f"/api/v1/coupons/{coupon.pk}"), 401, "NOT_AUTHENTICATED")


def test_a_signed_in_user_without_capabilities_gets_403(coupon, django_user_model):
    client = APIClient()
    client.force_login(django_user_model.objects.create_user("shopper", password="pw-123456"))
    before = counts()

    error(client.get(f"/api/v1/coupons/{coupon.pk}"), 403, "PERMISSION_DENIED")
    error(post(client, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "x"}),
          403, "PERMISSION_DENIED")
    assert counts() == before


def test_an_operator_can_void_under_their_own_name_and_key_scope(coupon, django_user_model,
                                                                  api):
    staff = django_user_model.objects.create_user("sam", password="pw-123456", is_staff=True)
    staff.groups.add(Group.objects.get(name="operator"))
    client = APIClient()
    client.force_login(staff)
    post(api, f"coupons/{coupon.pk}/void", {"expected_version": 9, "reason": "x"}, key="v1")

    body = ok(post(client, f"coupons/{coupon.pk}/void", {"expected_version": 1, "reason": "x"},
                   key="v1"))

    assert body["status"] == "VOID"
    assert CouponOperation.objects.get(op_type="VOID").actor == "user:sam"


# --- listing ------------------------------------------------------------------------------


@pytest.fixture
def wallet(api, template, clock, ctx):
    """u1 holds three coupons (one locked by order A, one used by order B), u2 holds one."""
    other = template_create(code="pct", name="pct", kind="PERCENT_OFF",
                            percent_off=Decimal("10"), valid_days=10)
    c1, c2, c3 = (coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
                  for _ in range(3))
    c4 = coupon_issue(template_id=other.pk, user_id="u2", ctx=ctx).coupon
    lock(api, c1, order_id="A")
    used = lock(api, c2, order_id="B")
    ok(post(api, f"coupons/{c2.pk}/redeem", proof(used, payment_id="P")))
    return {"c1": c1.pk, "c2": c2.pk, "c3": c3.pk, "c4": c4.pk, "pct": other.pk}


def listed(api, query) -> list[int]:
    return [c["id"] for c in ok(api.get(f"/api/v1/coupons?{query}"))["results"]]


def test_list_filters_by_user_order_status_and_template(api, wallet, template):
    assert listed(api, "user_id=u1") == [wallet["c1"], wallet["c2"], wallet["c3"]]
    assert listed(api, "user_id=u2") == [wallet["c4"]]
    assert listed(api, "order_id=A") == [wallet["c1"]]
    assert listed(api, "order_id=B") == [wallet["c2"]]  # used: the order's evidence remains
    assert listed(api, "status=AVAILABLE") == [wallet["c3"], wallet["c4"]]
    assert listed(api, "status=USED") == [wallet["c2"]]
    assert listed(api, f"template_id={wallet['pct']}") == [wallet["c4"]]
    assert listed(api, f"user_id=u1&status=LOCKED&template_id={template.pk}") == [wallet["c1"]]
    assert listed(api, "user_id=nobody") == []


def test_list_is_paginated(api, wallet):
    first = ok(api.get("/api/v1/coupons?page_size=3"))
    second = ok(api.get(first["next"]))

    assert first["count"] == second["count"] == 4
    assert [c["id"] for c in first["results"] + second["results"]] == sorted(
        wallet[k] for k in ("c1", "c2", "c3", "c4")
    )
    assert second["next"] is None and second["previous"]
    assert set(first["results"][0]) == COUPON_FIELDS


@pytest.mark.parametrize("query", ["status=BOGUS", "template_id=abc", "template_id=0",
                                   "user_id=" + "x" * 65])
def test_list_with_a_bad_filter_is_400(api, wallet, query):
    error(api.get(f"/api/v1/coupons?{query}"), 400, "VALIDATION_ERROR")


def test_list_page_past_the_end_is_404(api, wallet):
    error(api.get("/api/v1/coupons?page=9"), 404, "NOT_FOUND")


# --- schema -------------------------------------------------------------------------------


def api_paths() -> set[str]:
    """Every routed API path, written the way OpenAPI writes it."""
    return {
        "/api/v1/" + re.sub(r"<\w+:(\w+)>", r"{\1}", str(pattern.pattern))
        for pattern in api_urls.urlpatterns
        if pattern.name not in {"schema", "docs", "redoc", "asyncapi", "errors"}
    }


def test_schema_lists_every_endpoint(api):
    response = api.get("/api/v1/schema/?format=json")

    schema = ok(response)
    assert schema["openapi"].startswith("3.")
    assert api_paths() <= set(schema["paths"])
    lock_op = schema["paths"]["/api/v1/coupons/{coupon_id}/lock"]["post"]
    assert "Idempotency-Key" in {p["name"] for p in lock_op["parameters"]}


@pytest.mark.parametrize("credentials", [{}, {"HTTP_AUTHORIZATION": "Token not-a-key"}],
                         ids=["no-key", "unknown-key"])
def test_the_schema_is_public_as_json_and_yaml(clock, credentials):
    as_json = APIClient().get("/api/v1/schema/?format=json", **credentials)
    as_yaml = APIClient().get("/api/v1/schema/", **credentials)

    assert as_json.status_code == as_yaml.status_code == 200
    assert as_json["Content-Type"].startswith("application/vnd.oai.openapi+json")
    assert as_json.json()["paths"]
    assert as_yaml.content.startswith(b"openapi: 3.")

"""Two requests with one Idempotency-Key at once, on PostgreSQL: the key's claim is the first
write of the command's transaction, and the unique index makes the twin wait for it."""

import threading

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from coupons.models import CouponOperation, IdempotencyRecord
from coupons.services import CommandContext
from coupons.write.idempotency import idempotency_claim, idempotency_complete
from coupons.write.idempotency_seal import request_fingerprint

pytestmark = pytest.mark.django_db(transaction=True)

BODY = {"expected_version": 1, "reason": "risk"}
STORED = {"stored": "by the first request"}


def first_request_holding_its_claim(scope, path, release):
    """A first request that has claimed the key and not yet committed, until `release` is set;
    then it stores STORED as its answer and commits."""
    claimed = threading.Event()

    def run():
        try:
            with transaction.atomic():
                request_hash = request_fingerprint("POST", path, BODY)
                claim = idempotency_claim(scope=scope, key="twin", request_hash=request_hash)
                claimed.set()
                release.wait(timeout=30)
                ctx = CommandContext(actor="first", idempotency_scope=scope,
                                     idempotency_key="twin", request_hash=request_hash,
                                     idempotency_record_id=claim.record_id)
                idempotency_complete(ctx, status=200, body=STORED)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    assert claimed.wait(timeout=30)
    return thread


def post(key, path):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.post(path, BODY, format="json", HTTP_IDEMPOTENCY_KEY="twin")


def test_a_twin_still_running_past_the_short_wait_is_told_409(coupon, service_client, settings):
    settings.COUPONS = {**settings.COUPONS, "IDEMPOTENCY_TWIN_WAIT_MS": 200}
    client, key = service_client
    path = f"/api/v1/coupons/{coupon.pk}/void"
    release = threading.Event()
    first = first_request_holding_its_claim(client.idempotency_scope, path, release)
    try:
        twin = post(key, path)
    finally:
        release.set()
        first.join(timeout=30)

    assert twin.status_code == 409, twin.json()
    assert twin.json()["error"]["code"] == "IDEMPOTENCY_REQUEST_IN_PROGRESS"
    assert not CouponOperation.objects.filter(coupon=coupon, op_type="VOID").exists()
    # The twin's wait was bounded for its claim only: the session's setting is untouched.
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        assert cursor.fetchone()[0] == "0"


def test_a_twin_waits_for_the_first_commit_and_answers_its_stored_result(
    coupon, service_client
):
    client, key = service_client
    path = f"/api/v1/coupons/{coupon.pk}/void"
    release = threading.Event()
    first = first_request_holding_its_claim(client.idempotency_scope, path, release)
    answers = []
    twin = threading.Thread(target=lambda: (answers.append(post(key, path)), connection.close()))
    twin.start()
    twin.join(timeout=0.5)
    assert twin.is_alive(), "the twin should wait for the first request's commit"
    release.set()
    first.join(timeout=30)
    twin.join(timeout=30)

    [answer] = answers
    assert (answer.status_code, answer.json()) == (200, STORED)
    assert answer.headers["Idempotent-Replayed"] == "true"
    assert not CouponOperation.objects.filter(coupon=coupon, op_type="VOID").exists()
    [record] = IdempotencyRecord.objects.all()
    assert (record.status, record.response_body) == ("COMPLETED", STORED)

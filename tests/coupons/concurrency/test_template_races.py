"""Concurrent creates of one template code on PostgreSQL: one 201, the rest 409, never a 500.

Before, an exists() check raced the insert and 13 of 32 answers were 500 (IntegrityError); the
unique index now decides and the loser answers ALREADY_EXISTS naming the winner.
"""

import pytest
from rest_framework.test import APIClient

from coupons.models import CouponTemplate, CouponTemplateVersion
from tests.api.test_commands_api import TEMPLATE
from tests.coupons.concurrency.threads import race

pytestmark = pytest.mark.django_db(transaction=True)


def create_with_key(api_key, idempotency_key):
    def call():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {api_key}")
        answer = client.post("/api/v1/templates", TEMPLATE, format="json",
                             HTTP_IDEMPOTENCY_KEY=idempotency_key)
        return answer.status_code, answer.json()
    return call


def test_eight_creates_of_one_code_make_one_template_and_seven_409s(service_client, clock):
    outcomes = race(*(create_with_key(service_client[1], f"create-{n}") for n in range(8)))

    answers = [value for _, value in outcomes]
    winners = [body for status, body in answers if status == 201]
    losers = [body["error"] for status, body in answers if status != 201]
    assert len(winners) == 1, answers
    assert {status for status, _ in answers} == {201, 409}, answers
    assert {error["code"] for error in losers} == {"ALREADY_EXISTS"}
    assert all(error["details"]["template_id"] == winners[0]["id"] for error in losers)
    assert CouponTemplate.objects.count() == 1
    assert CouponTemplateVersion.objects.count() == 1


def test_eight_retries_under_one_key_make_one_template(service_client, clock):
    outcomes = race(*(create_with_key(service_client[1], "create-once") for _ in range(8)))

    answers = [value for _, value in outcomes]
    created = [body for status, body in answers if status == 201]
    busy = [body["error"]["code"] for status, body in answers if status != 201]
    # Each answer is the first create or its stored replay; a retry that came while the first
    # was still running is told so (and gets the stored answer when it retries).
    assert created and all(body == created[0] for body in created), answers
    assert set(busy) <= {"IDEMPOTENCY_REQUEST_IN_PROGRESS"}, answers
    assert CouponTemplate.objects.count() == 1

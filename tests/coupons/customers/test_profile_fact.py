"""CustomerProfileUpdated: the user service's profile facts make the customer directory,
once per message, newest wins, and no phone number is kept as sent."""

from datetime import timedelta

import pytest
from django.db import connection
from rest_framework.test import APIClient

from coupons.models import CustomerProfile, InboxMessage
from coupons.phones import masked, normalised, phone_hash
from coupons.services import service_client_create

pytestmark = pytest.mark.django_db

PHONE = "13812345678"


def profile_fact(send, user_id="u-7", phone=PHONE, nickname="小王", **kwargs):
    return send("CustomerProfileUpdated", user_id=user_id, phone=phone, nickname=nickname,
                **kwargs)


def rows() -> list[tuple]:
    return list(CustomerProfile.objects.order_by("user_id").values_list(
        "user_id", "phone_masked", "nickname"))


def test_a_profile_fact_makes_the_customer_s_row(send):
    answer = profile_fact(send)

    assert answer["status"] == "PROCESSED"
    assert answer["outcome"] == {"action": "PROFILE_UPDATED", "user_id": "u-7",
                                 "repeated_fact": False}
    assert rows() == [("u-7", "138****5678", "小王")]
    assert CustomerProfile.objects.get().phone_hash == phone_hash("+8613812345678")


def test_a_redelivery_is_a_duplicate_and_changes_nothing(send):
    first = profile_fact(send, message_id="p-1")
    again = profile_fact(send, message_id="p-1", phone="+86 138-1234-5678")

    assert (first["status"], again["status"]) == ("PROCESSED", "DUPLICATE")
    assert InboxMessage.objects.count() == 1
    assert rows() == [("u-7", "138****5678", "小王")]


def test_the_same_profile_under_a_new_message_id_is_unchanged(send):
    profile_fact(send)

    assert profile_fact(send, phone="0086 138 1234 5678")["outcome"]["action"] == (
        "PROFILE_UNCHANGED")


def test_a_newer_fact_rewrites_the_row_and_an_older_one_arriving_late_does_not(send, clock):
    start = clock.now()
    profile_fact(send, occurred_at=start)
    newer = profile_fact(send, phone="13900001111", nickname="王先生",
                         occurred_at=start + timedelta(minutes=5))
    late = profile_fact(send, phone="13700002222", nickname="old",
                        occurred_at=start + timedelta(minutes=1))

    assert (newer["outcome"]["action"], late["outcome"]["action"]) == (
        "PROFILE_UPDATED", "PROFILE_OUTDATED")
    assert rows() == [("u-7", "139****1111", "王先生")]


@pytest.mark.parametrize("payload, field", [
    ({"user_id": "u-7", "phone": "call me"}, "phone"),
    ({"user_id": "u-7", "phone": 13812345678}, "phone"),
    ({"phone": PHONE}, "user_id"),
    ({"user_id": "u-7", "nickname": "x" * 65}, "nickname"),
])
def test_a_malformed_profile_is_a_structured_400_and_nothing_is_recorded(send, payload, field):
    answer = send("CustomerProfileUpdated", expect=400, **payload)

    assert answer["error"]["code"] == "VALIDATION_ERROR"
    assert field in answer["error"]["details"]["payload"]
    assert InboxMessage.objects.count() == 0
    assert rows() == []


def test_no_stored_row_holds_the_phone_number(send):
    profile_fact(send, phone="+86 138 1234 5678")

    with connection.cursor() as cursor:
        cursor.execute("SELECT row_to_json(p)::text FROM coupons_customerprofile p")
        (profile,) = cursor.fetchone()
        cursor.execute("SELECT row_to_json(m)::text FROM coupons_inboxmessage m")
        (message,) = cursor.fetchone()
        cursor.execute("SELECT coalesce(string_agg(row_to_json(j)::text, ''), '') "
                       "FROM coupons_journalentry j")
        (journal,) = cursor.fetchone()
    for stored in (profile, message, journal):
        assert "12345678" not in stored and "1234 5678" not in stored
    assert "138****5678" in profile


@pytest.mark.parametrize("typed", [
    "13812345678", "138 1234 5678", "138-1234-5678", "+8613812345678", "+86 138 1234 5678",
    "0086 13812345678", "(+86) 138-1234-5678", "138.1234.5678",
])
def test_common_spellings_normalise_to_one_number(typed):
    assert normalised(typed) == "+8613812345678"


def test_what_is_not_a_phone_number_is_none_and_a_number_shows_masked():
    assert [normalised(t) for t in ("", "abc", "1381234", "u-7", "+86")] == [None] * 5
    assert masked("+8613812345678") == "138****5678"


def test_a_client_not_granted_profile_facts_cannot_send_one(clock):
    client = APIClient()
    key = service_client_create(name="order-only", fact_types=["OrderClosed"])[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    answer = client.post("/api/v1/events", {
        "message_id": "p-9", "type": "CustomerProfileUpdated",
        "occurred_at": clock.now().isoformat(),
        "payload": {"user_id": "u-7", "phone": PHONE}}, format="json")

    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "PERMISSION_DENIED"
    assert rows() == [] and InboxMessage.objects.count() == 0

"""A console form's key is an Idempotency-Key like the API's: its stored answer is sealed, and
one rewritten by the database's login is never shown as the form's result
(tests/coupons/write/test_sealed_idempotency.py has the API's cases)."""

import pytest
from django.db import connection

from refunds.models import Compensation
from tests.timeline.queue_helpers import press, text
from tests.timeline.queue_objects import proposal
from timeline.queue_forms import fresh_key

pytestmark = pytest.mark.django_db


def test_a_console_form_whose_stored_answer_was_edited_is_not_replayed(signed_in, coupon):
    compensation = proposal(coupon, proposer="user:alice")
    client = signed_in("operator", "olga")
    key = fresh_key()
    first = press(client, "compensation_reject", key, compensation_id=compensation.pk,
                  note="not ours")
    assert first.status_code == 200
    with connection.cursor() as cursor:  # as the application role (tests/app_role.py)
        cursor.execute("UPDATE coupons_idempotencyrecord SET response_body = "
                       "jsonb_set(response_body, '{status}', '\"APPROVED\"') WHERE key = %s",
                       [key])

    again = press(client, "compensation_reject", key, compensation_id=compensation.pk,
                  note="not ours")

    assert again.status_code == 409
    assert "IDEMPOTENCY_RECORD_INVALID" in text(again)
    assert "cannot be verified" in text(again)
    assert Compensation.objects.get(pk=compensation.pk).status == "REJECTED"

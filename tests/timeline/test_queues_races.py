"""Double clicks for real on PostgreSQL: the same queue form sent from racing threads."""

import pytest
from django.test import Client

from coupons.models import CouponOperation, IdempotencyRecord
from tests.coupons.concurrency.threads import race
from tests.refunds.conftest import default_policy  # noqa: F401 (a transactional test's flush drops it)
from tests.timeline.queue_helpers import new_key, press, text
from tests.timeline.queue_objects import pending_decision

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def decision(coupon, default_policy):  # noqa: F811
    return pending_decision(coupon)


def signed_in_clients(person, count=1):
    """One test client (its own session) per racing thread, all signed in as `person`."""
    clients = [Client() for _ in range(count)]
    for client in clients:
        client.force_login(person)
    return clients


def returns(decision):
    return CouponOperation.objects.filter(coupon_id=decision.coupon_id, op_type="RETURN").count()


def test_eight_racing_submissions_of_one_approval_form_return_the_coupon_once(
        make_person, decision):
    clients = signed_in_clients(make_person("operator", "olga"), count=8)
    key = new_key()

    def submit(client):
        answer = press(client, "decision_approve", key, decision_id=decision.pk,
                       action="RETURN")
        return answer.status_code, text(answer)

    answers = [value for _, value in race(*(lambda c=c: submit(c) for c in clients))]

    assert returns(decision) == 1
    assert all(status in (200, 409) for status, _ in answers), answers
    assert any(status == 200 for status, _ in answers)
    in_flight = [page for status, page in answers if status == 409]
    assert all("IDEMPOTENCY_REQUEST_IN_PROGRESS" in page for page in in_flight)
    [record] = IdempotencyRecord.objects.all()
    assert record.response_status == 200


def test_two_operators_approving_at_once_return_the_coupon_once(make_person, decision):
    clients = [client for name in ("olga", "omar")
               for client in signed_in_clients(make_person("operator", name))]

    def approve(client):
        return press(client, "decision_approve", decision_id=decision.pk,
                     action="RETURN").status_code

    statuses = sorted(value for _, value in race(*(lambda c=c: approve(c) for c in clients)))

    assert statuses == [200, 409]  # the second finds it no longer pending (INVALID_STATE)
    assert returns(decision) == 1

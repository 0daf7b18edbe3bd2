"""The conflict-case queue: open cases first, resolved with the recommendation or by hand."""

import re

import pytest

from coupons.models import CouponOperation
from tests.timeline.queue_helpers import new_key, press, text
from tests.timeline.queue_objects import fresh_coupon, late_payment_case
from tests.timeline.test_coupon_page import codes

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(coupon):
    return late_payment_case(coupon)


def ledger(case):
    return list(CouponOperation.objects.filter(coupon_id=case.coupon_id)
                .order_by("to_version").values_list("op_type", flat=True))


def test_applying_a_compensating_redeem_locks_and_redeems_for_the_paid_order(signed_in, case):
    client = signed_in("operator")
    key = new_key()

    answer = press(client, "case_resolve", key, case_id=case.pk, action="APPLY",
                   note="payment P-A is real")

    assert answer.status_code == 200
    case.refresh_from_db()
    assert (case.status, case.resolution, case.resolved_by, case.resolution_note) == (
        "RESOLVED", "COMPENSATING_REDEEM", "user:operator-1", "payment P-A is real")
    assert ledger(case) == ["ISSUE", "LOCK", "RELEASE", "LOCK", "REDEEM"]
    written = CouponOperation.objects.filter(coupon_id=case.coupon_id, idempotency_key=key)
    assert [(op.op_type, op.order_id) for op in written.order_by("to_version")] == [
        ("LOCK", "order-A"), ("REDEEM", "order-A")]
    page = text(answer)
    for op in written:
        assert f'id="op-{op.pk}"' in page
    assert "LOCKED → USED" in codes(page)
    assert 'name="idempotency_key"' not in page  # resolved: nothing left to press


def test_resolving_twice_with_the_same_form_redeems_once(signed_in, case):
    client = signed_in("operator")
    key = new_key()

    press(client, "case_resolve", key, case_id=case.pk, action="APPLY", note="paid")
    again = press(client, "case_resolve", key, case_id=case.pk, action="APPLY", note="paid")

    assert again.status_code == 200 and "Already done" in text(again)
    assert ledger(case) == ["ISSUE", "LOCK", "RELEASE", "LOCK", "REDEEM"]


def test_resolving_by_hand_writes_no_ledger_row(signed_in, case):
    client = signed_in("operator")

    press(client, "case_resolve", case_id=case.pk, action="RESOLVE", note="refunded by phone")

    case.refresh_from_db()
    assert (case.status, case.resolution) == ("RESOLVED", "MANUAL")
    assert ledger(case) == ["ISSUE", "LOCK", "RELEASE"]


def test_a_reason_is_required_and_nothing_changes_without_it(signed_in, case):
    client = signed_in("operator")

    answer = press(client, "case_resolve", case_id=case.pk, action="APPLY", note="  ")

    assert answer.status_code == 200
    assert re.search(r'id="caseresolveform-\d+-note".*?This field is required', text(answer),
                     re.S)
    case.refresh_from_db()
    assert case.status == "OPEN"
    assert ledger(case) == ["ISSUE", "LOCK", "RELEASE"]


def test_a_case_that_cannot_be_applied_any_more_shows_the_refusal(signed_in, case, ctx):
    from tests.conftest import lock

    lock(case.coupon, ctx, order_id="order-B")  # another order took the coupon meanwhile
    client = signed_in("operator")

    answer = press(client, "case_resolve", case_id=case.pk, action="APPLY", note="paid")

    assert answer.status_code == 409
    assert "INVALID_STATE" in text(answer)
    case.refresh_from_db()
    assert case.status == "OPEN"  # a failing command leaves the case open
    assert 'name="idempotency_key"' in text(answer)  # try again (by hand) with a new key


def test_open_cases_come_first_and_the_filter_shows_each_kind(signed_in, case, template):
    resolved = late_payment_case(fresh_coupon(template), order_id="order-Z")
    client = signed_in("operator")
    press(client, "case_resolve", case_id=resolved.pk, action="DISMISS", note="duplicate")
    newest_open = late_payment_case(fresh_coupon(template), order_id="order-N")

    page = text(client.get("/cases/?status=all"))
    order = [int(pk) for pk in re.findall(r'id="case-(\d+)"', page)]
    assert order == [newest_open.pk, case.pk, resolved.pk]  # open (newest first), then closed
    # The queue opens on what needs work: the open cases.
    opened_on = text(client.get("/cases/"))
    assert re.search(r'href="\?status=open" aria-current="true"', opened_on)
    open_only = [int(pk) for pk in re.findall(r'id="case-(\d+)"', opened_on)]
    assert open_only == [newest_open.pk, case.pk]
    closed = re.findall(r'id="case-(\d+)"', text(client.get("/cases/?status=resolved")))
    assert list(map(int, closed)) == [resolved.pk]


def test_support_sees_cases_without_evidence_notes_or_buttons(signed_in, case):
    operator = signed_in("operator")
    press(operator, "case_resolve", case_id=case.pk, action="RESOLVE", note="secret remedy")

    assert "secret remedy" in text(operator.get("/cases/?status=resolved"))

    page = text(signed_in("support").get("/cases/?status=resolved"))

    assert f'id="case-{case.pk}"' in page
    assert "secret remedy" not in page and "refused_with" not in page
    assert "Only operators see this. Ask an operator if you need it" in page
    assert 'name="idempotency_key"' not in page


def test_a_support_post_is_refused_and_the_case_stays_open(signed_in, case):
    answer = press(signed_in("support"), "case_resolve", case_id=case.pk, action="RESOLVE",
                   note="x")
    assert answer.status_code == 403
    case.refresh_from_db()
    assert case.status == "OPEN"

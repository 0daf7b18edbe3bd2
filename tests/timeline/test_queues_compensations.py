"""Compensations: one operator proposes for a ledger row, a different operator decides."""

import re

import pytest

from coupons.models import CouponOperation
from refunds.models import Compensation
from tests.timeline.queue_helpers import new_key, press, text
from tests.timeline.queue_objects import proposal, redeemed

pytestmark = pytest.mark.django_db


def ops(coupon):
    return list(CouponOperation.objects.filter(coupon=coupon).order_by("to_version")
                .values_list("op_type", flat=True))


def test_a_proposal_from_the_console_is_approved_only_by_another_operator(
        signed_in, coupon):
    redeem = redeemed(coupon)
    client = signed_in("operator", "alice")

    made = press(client, "compensation_propose", operation_id=redeem.pk, remedy="reverse",
                 reason="redeemed by mistake")

    assert made.status_code == 200
    compensation = Compensation.objects.get()
    assert (compensation.kind, compensation.status, compensation.created_by) == (
        "REVERSE_OPERATION", "PROPOSED", "user:alice")
    assert f'id="compensation-{compensation.pk}"' in text(made)

    # Four eyes: the proposer is shown why, not an Approve button ...
    queue = text(client.get("/compensations/"))
    assert "You proposed this compensation" in queue
    assert f'action="/compensations/{compensation.pk}/approve"' not in queue
    # ... and a forged POST is still refused by the service.
    own = press(client, "compensation_approve", compensation_id=compensation.pk)

    assert own.status_code == 403
    assert "SAME_OPERATOR" in text(own)
    assert "someone other than its proposer" in text(own)
    assert "You proposed this" in text(own)
    compensation.refresh_from_db()
    assert compensation.status == "PROPOSED"
    assert ops(coupon) == ["ISSUE", "LOCK", "REDEEM"]

    client = signed_in("operator", "bob")
    approved = press(client, "compensation_approve", compensation_id=compensation.pk,
                     note="checked the order")

    assert approved.status_code == 200
    compensation.refresh_from_db()
    assert (compensation.status, compensation.decided_by) == ("APPROVED", "user:bob")
    reverse = CouponOperation.objects.get(coupon=coupon, op_type="REVERSE")
    assert reverse.original_operation_id == redeem.pk
    assert ops(coupon) == ["ISSUE", "LOCK", "REDEEM", "REVERSE"]
    assert f'id="op-{reverse.pk}"' in text(approved)


def test_a_double_submitted_approval_appends_one_reverse_row(signed_in, coupon):
    compensation = proposal(coupon)
    client = signed_in("operator", "bob")
    key = new_key()

    press(client, "compensation_approve", key, compensation_id=compensation.pk)
    again = press(client, "compensation_approve", key, compensation_id=compensation.pk)

    assert again.status_code == 200 and "Already done" in text(again)
    assert ops(coupon) == ["ISSUE", "LOCK", "REDEEM", "REVERSE"]


def test_reject_needs_a_reason_and_writes_no_ledger_row(signed_in, coupon):
    compensation = proposal(coupon)
    client = signed_in("operator", "bob")

    blank = press(client, "compensation_reject", compensation_id=compensation.pk, note="")

    assert re.search(r'id="rejectform-\d+-note".*?This field is required', text(blank), re.S)
    compensation.refresh_from_db()
    assert compensation.status == "PROPOSED"

    press(client, "compensation_reject", compensation_id=compensation.pk, note="order was fine")

    compensation.refresh_from_db()
    assert (compensation.status, compensation.decision_note) == ("REJECTED", "order was fine")
    assert ops(coupon) == ["ISSUE", "LOCK", "REDEEM"]


def test_invalid_proposal_input_shows_field_errors_and_proposes_nothing(signed_in, coupon):
    redeem = redeemed(coupon)
    client = signed_in("operator")

    answer = press(client, "compensation_propose", operation_id=redeem.pk, amount="-5",
                   reason="")

    page = text(answer)
    assert answer.status_code == 200
    for field in ("remedy", "amount", "reason"):
        assert re.search(rf'id="proposecompensationform-new-{field}.*?<ul class="errorlist',
                         page, re.S), field
    assert not Compensation.objects.exists()


def test_paying_needs_an_amount_and_a_reversal_ignores_one(signed_in, coupon):
    redeem = redeemed(coupon)
    client = signed_in("operator")

    unpaid = press(client, "compensation_propose", operation_id=redeem.pk, remedy="pay",
                   reason="late delivery")
    assert "Give the amount to pay." in text(unpaid)
    assert not Compensation.objects.exists()

    press(client, "compensation_propose", operation_id=redeem.pk, remedy="reverse",
          amount="30.00", reason="redeemed by mistake")
    assert Compensation.objects.get().kind == "REVERSE_OPERATION"


@pytest.mark.parametrize("operation_id", ["999999", "x", ""])
def test_a_bad_ledger_row_answers_not_found_alone(signed_in, coupon, operation_id):
    client = signed_in("operator")

    answer = press(client, "compensation_propose", operation_id=operation_id,
                   remedy="reverse", reason="why not")

    page = text(answer)
    assert answer.status_code == 404
    assert "NOT_FOUND" in page
    assert '<ul class="errorlist' not in page  # no "• 999999" under a field
    assert not Compensation.objects.exists()


def test_a_link_to_no_ledger_row_shows_only_the_not_found_box(signed_in):
    answer = signed_in("operator").get("/compensations/propose?operation=999999")

    page = text(answer)
    assert answer.status_code == 404
    assert "NOT_FOUND" in page and "No such ledger operation." in page
    assert 'name="reason"' not in page and '<ul class="errorlist' not in page


def test_support_sees_proposals_without_amounts_reasons_or_buttons(signed_in, coupon):
    from decimal import Decimal

    compensation = proposal(coupon, amount=Decimal("12.50"))
    operator_page = text(signed_in("operator").get("/compensations/"))
    assert "¥12.50" in operator_page and "redeemed by mistake" in operator_page

    page = text(signed_in("support").get("/compensations/"))

    assert f'id="compensation-{compensation.pk}"' in page
    assert "12.50" not in page and "redeemed by mistake" not in page
    assert "Only operators see this. Ask an operator if you need it" in page
    assert 'name="idempotency_key"' not in page  # neither decide nor propose


def test_a_support_post_is_refused_and_nothing_is_decided(signed_in, coupon):
    compensation = proposal(coupon)

    answer = press(signed_in("support"), "compensation_approve",
                   compensation_id=compensation.pk)

    assert answer.status_code == 403
    compensation.refresh_from_db()
    assert compensation.status == "PROPOSED"


def test_the_ledger_row_button_opens_the_proposal_prefilled_from_the_row(signed_in, coupon):
    redeem = redeemed(coupon)
    lock_row = coupon.operations.get(op_type="LOCK")
    client = signed_in("operator")

    coupon_page = text(client.get(f"/coupons/{coupon.pk}/"))
    assert f'href="/compensations/propose?operation={redeem.pk}"' in coupon_page

    page = text(client.get(f"/compensations/propose?operation={redeem.pk}"))
    assert re.search(rf'type="hidden" name="operation_id" value="{redeem.pk}"', page)
    assert re.search(r'value="reverse"[^>]*checked', page)  # a REDEEM is reversed
    assert 'name="coupon_id"' not in page  # nothing to type but the reason

    # A LOCK cannot be reversed: the form offers to pay, the order's own discount prefilled.
    page = text(client.get(f"/compensations/propose?operation={lock_row.pk}"))
    assert 'value="reverse"' not in page
    assert re.search(r'value="pay"[^>]*checked', page)
    assert re.search(r'name="amount" value="30.00"', page)


def test_support_sees_no_propose_button_on_the_ledger(signed_in, coupon):
    redeemed(coupon)

    page = text(signed_in("support").get(f"/coupons/{coupon.pk}/"))

    assert "/compensations/propose" not in page


def test_without_javascript_the_proposal_is_confirmed_on_its_own_page(signed_in, coupon):
    redeem = redeemed(coupon)
    client = signed_in("operator")

    asked = press(client, "compensation_propose", htmx=False, confirmed=False,
                  operation_id=redeem.pk, remedy="reverse", reason="redeemed by mistake")

    assert asked.status_code == 200 and "Propose a compensation?" in text(asked)
    assert not Compensation.objects.exists()
    done = press(client, "compensation_propose", htmx=False, operation_id=redeem.pk,
                 remedy="reverse", reason="redeemed by mistake")
    assert done.status_code == 302 and done["Location"] == "/compensations/"
    assert Compensation.objects.get().operation_id == redeem.pk

"""Compensations: one operator proposes for a ledger row, a different operator decides."""

import re

import pytest

from coupons.models import CouponOperation
from refunds.models import Compensation
from tests.console.queue_helpers import new_key, press, text
from tests.console.queue_objects import proposal, redeemed

pytestmark = pytest.mark.django_db


def ops(coupon):
    return list(CouponOperation.objects.filter(coupon=coupon).order_by("to_version")
                .values_list("op_type", flat=True))


def test_a_proposal_from_the_console_is_approved_only_by_another_operator(
        signed_in, coupon):
    redeem = redeemed(coupon)
    client = signed_in("operator", "alice")

    made = press(client, "compensation_propose", coupon_id=coupon.pk, operation_id=redeem.pk,
                 reason="redeemed by mistake")

    assert made.status_code == 200
    compensation = Compensation.objects.get()
    assert (compensation.kind, compensation.status, compensation.created_by) == (
        "REVERSE_OPERATION", "PROPOSED", "user:alice")
    assert f'id="compensation-{compensation.pk}"' in text(made)

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
    client = signed_in("operator")

    answer = press(client, "compensation_propose", coupon_id="", operation_id="x",
                   amount="-5", reason="")

    page = text(answer)
    assert answer.status_code == 200
    for field in ("coupon_id", "operation_id", "amount", "reason"):
        assert re.search(rf'id="proposecompensationform-new-{field}".*?<ul class="errorlist',
                         page, re.S), field
    assert not Compensation.objects.exists()


def test_proposing_for_an_operation_of_another_coupon_answers_not_found(signed_in, coupon):
    client = signed_in("operator")

    answer = press(client, "compensation_propose", coupon_id=coupon.pk, operation_id=999999,
                   reason="why not")

    assert answer.status_code == 404
    assert "NOT_FOUND" in text(answer)
    assert not Compensation.objects.exists()


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


def test_the_coupon_page_link_prefills_the_proposal(signed_in, coupon):
    redeem = redeemed(coupon)
    page = text(signed_in("operator").get(
        f"/compensations/?coupon={coupon.pk}&operation={redeem.pk}"))
    assert re.search(rf'name="operation_id" value="{redeem.pk}"', page)

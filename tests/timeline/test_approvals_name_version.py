"""The console's approve and reject forms, and bulk approve, name the version they showed.

Each form carries the hash of the record's newest journal entry read with the page (hidden
`seen_entry`; bulk: `seen-<id>` beside each checkbox). A record changed after the page was
shown, even one changed past the services so that it still folds, is refused: the operator
reads a sentence saying so (in Chinese too), the item is shown as it is now with a form naming
that version, and the refusal is on the Activity page (tests/refunds/test_approval_names_version.py
for the API).
"""

import re

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import translation

from coupons.evidence.tips import journal_tip
from coupons.models import CommandRejection, CouponOperation, OperationType
from refunds.models import Compensation, RefundCoupon
from tests.refunds.conftest import moved_past_the_services
from tests.timeline.queue_helpers import new_key, press, text
from tests.timeline.queue_objects import fresh_coupon, pending_decision, proposal
from tests.timeline.test_team_lists import bulk
from tests.zh_catalogue import compiled_catalogue  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db

CHANGED = "This record changed after you opened it."


def test_the_queue_forms_carry_the_version_the_page_shows(signed_in, template):
    decision = pending_decision(fresh_coupon(template))
    compensation = proposal(fresh_coupon(template, "u2"))
    client = signed_in("operator", "olga")

    approvals = text(client.get(reverse("console:approvals")))
    compensations = text(client.get(reverse("console:compensations")))

    tip = journal_tip(RefundCoupon, decision.pk)
    assert approvals.count(f'value="{tip}"') == 3  # approve, reject, the bulk form's checkbox
    assert f'name="seen-{decision.pk}" value="{tip}"' in approvals
    assert compensations.count(f'value="{journal_tip(Compensation, compensation.pk)}"') == 2


def test_an_approval_of_a_decision_changed_since_the_page_is_refused_then_shown_anew(
        signed_in, template):
    coupon = fresh_coupon(template)
    decision = pending_decision(coupon)
    client = signed_in("operator", "olga")
    shown = journal_tip(RefundCoupon, decision.pk)
    moved_past_the_services(RefundCoupon, decision.pk, "recommended", action="RETURN")

    answer = press(client, "decision_approve", decision_id=decision.pk, seen_entry=shown)

    assert answer.status_code == 409
    assert CHANGED in text(answer) and "EVIDENCE_CHANGED" in text(answer)
    assert RefundCoupon.objects.get(pk=decision.pk).status == "PENDING_APPROVAL"
    # The item as it is now, its forms naming that version: approving it again runs.
    now = journal_tip(RefundCoupon, decision.pk)
    assert f'value="{now}"' in text(answer) and f'value="{shown}"' not in text(answer)
    again = press(client, "decision_approve", decision_id=decision.pk, seen_entry=now)
    assert again.status_code == 200, text(again)
    assert CouponOperation.objects.filter(op_type=OperationType.RETURN).count() == 1


def test_a_compensation_changed_since_the_page_is_not_decided(signed_in, template):
    coupon = fresh_coupon(template)
    compensation = proposal(coupon)
    shown = journal_tip(Compensation, compensation.pk)
    moved_past_the_services(Compensation, compensation.pk, "approved", decision_note="ok")
    client = signed_in("operator", "olga")

    answer = press(client, "compensation_approve", compensation_id=compensation.pk,
                   seen_entry=shown)

    assert answer.status_code == 409 and CHANGED in text(answer)
    assert Compensation.objects.get(pk=compensation.pk).status == "PROPOSED"
    assert not CouponOperation.objects.filter(op_type=OperationType.REVERSE).exists()


def test_bulk_approve_refuses_a_decision_changed_since_the_list_and_runs_the_others(
        signed_in, template):
    changed_coupon = fresh_coupon(template)
    changed = pending_decision(changed_coupon, order_id="order-1")
    kept = pending_decision(fresh_coupon(template, "u2"), order_id="order-2")
    client = signed_in("operator", "olga")
    listed = {d.pk: journal_tip(RefundCoupon, d.pk) for d in (changed, kept)}
    moved_past_the_services(RefundCoupon, changed.pk, "recommended", rule_label="mallory")

    asked = bulk(client, "decision_bulk", [changed.pk, kept.pk], "reject", note="dupes",
                 confirmed=False, seen=listed)
    answer = bulk(client, "decision_bulk", [changed.pk, kept.pk], "reject", note="dupes",
                  seen=listed)

    assert "changed since the list was shown" in text(asked)
    assert f'name="seen-{changed.pk}" value="{listed[changed.pk]}"' in text(asked)
    assert "2 items: 1 done, 1 refused." in text(answer) and CHANGED in text(answer)
    assert RefundCoupon.objects.get(pk=changed.pk).status == "PENDING_APPROVAL"
    assert RefundCoupon.objects.get(pk=kept.pk).status == "REJECTED"
    refusal = CommandRejection.objects.get(error_code="EVIDENCE_CHANGED")
    assert (refusal.op_type, refusal.actor) == ("REFUND_REJECT", "user:olga")


def test_a_bulk_post_without_the_versions_decides_nothing(signed_in, template):
    decision = pending_decision(fresh_coupon(template))
    client = signed_in("operator", "olga")

    answer = bulk(client, "decision_bulk", [decision.pk], "reject", note="dupes", seen={})

    assert "1 item: 0 done, 1 refused." in text(answer)
    assert "open the queue again" in text(answer)
    assert RefundCoupon.objects.get(pk=decision.pk).status == "PENDING_APPROVAL"


def test_a_refused_refund_approval_is_on_the_activity_page(signed_in, template):
    coupon = fresh_coupon(template)
    decision = pending_decision(coupon)
    shown = journal_tip(RefundCoupon, decision.pk)
    moved_past_the_services(RefundCoupon, decision.pk, "recommended", action="RETURN")
    press(signed_in("operator", "olga"), "decision_reject", decision_id=decision.pk,
          note="no", seen_entry=shown)

    auditor = signed_in("policy_admin", "pat")
    page = text(auditor.get(reverse("console:activity"), {"person": "olga"}))

    assert "REFUND_REJECT refused: EVIDENCE_CHANGED" in re.sub(r"<[^>]+>", "", page)


def test_the_refusal_reads_in_chinese(signed_in, template,
                                      compiled_catalogue):  # noqa: F811
    coupon = fresh_coupon(template)
    decision = pending_decision(coupon)
    shown = journal_tip(RefundCoupon, decision.pk)
    moved_past_the_services(RefundCoupon, decision.pk, "recommended", action="RETURN")
    client = signed_in("operator", "olga")

    with override_settings(LOCALE_PATHS=[str(compiled_catalogue)]), \
            translation.override("zh-hans"):
        answer = client.post(
            reverse("console:decision_approve", args=[decision.pk]),
            {"idempotency_key": new_key(), "action": "RETURN", "seen_entry": shown,
             "confirmed": "yes"}, HTTP_ACCEPT_LANGUAGE="zh-hans", HTTP_HX_REQUEST="true")

    assert answer.status_code == 409
    assert "此记录在您打开之后已被修改" in text(answer) and CHANGED not in text(answer)

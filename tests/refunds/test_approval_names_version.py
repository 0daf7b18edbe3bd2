"""An approval or rejection of a refund decision names the version its operator read.

The read answers `journal_tip` (the hash of the decision's newest journal entry); approve and
reject carry it back as `seen_entry`. A decision changed in between, even one changed past every
guard so that it still folds with its journal, is refused with 409 EVIDENCE_CHANGED, nothing
runs, and the refusal is in the rejection log with the operator. The console's forms and bulk
approve: tests/timeline/test_approvals_name_version.py; compensations:
tests/refunds/compensations/test_seen_entry.py.
"""

import pytest

from coupons.evidence.journal import fold_problem, with_journal
from coupons.evidence.tips import journal_tip
from coupons.models import CommandRejection, CouponOperation, OperationType
from refunds.models import RefundCoupon
from tests.app_role import past_the_triggers
from tests.refunds.conftest import moved_past_the_services, shown
from tests.refunds.test_refunds_api import coupon_row, pending

pytestmark = pytest.mark.django_db


def decide(client, decision, verb, key, **body):
    return client.post(f"/api/v1/refunds/{decision.pk}/{verb}", body, format="json",
                       HTTP_IDEMPOTENCY_KEY=key)


def test_a_read_answers_the_version_an_approval_names(operator, coupon, ctx):
    decision = pending(coupon, ctx)

    read = operator.get(f"/api/v1/refunds/{decision.pk}").json()
    listed = operator.get("/api/v1/refunds", {"status": "PENDING_APPROVAL"}).json()["results"]

    assert read["journal_tip"] == journal_tip(RefundCoupon, decision.pk)
    assert [d["journal_tip"] for d in listed] == [read["journal_tip"]]
    answer = decide(operator, decision, "approve", "a-1", action="RETURN",
                    seen_entry=read["journal_tip"])
    assert answer.status_code == 200, answer.json()
    assert coupon_row(coupon) == ("AVAILABLE", 4)


def test_a_decision_changed_after_it_was_read_is_not_approved(operator, coupon, ctx):
    decision = pending(coupon, ctx)
    read = operator.get(f"/api/v1/refunds/{decision.pk}").json()
    # The operator read a manual review; a stolen login makes it a RETURN that still folds.
    moved_past_the_services(RefundCoupon, decision.pk, "recommended", action="RETURN")
    row = with_journal(RefundCoupon.objects.filter(pk=decision.pk)).get()
    assert fold_problem(row) is None  # only the version seen tells the change

    answer = decide(operator, decision, "approve", "a-1", seen_entry=read["journal_tip"])

    assert answer.status_code == 409, answer.json()
    error = answer.json()["error"]
    assert error["code"] == "EVIDENCE_CHANGED"
    assert error["details"] == {"table": "refunds.refundcoupon", "id": decision.pk,
                                "seen_entry": read["journal_tip"],
                                "journal_tip": shown(decision.pk)}
    assert RefundCoupon.objects.get(pk=decision.pk).status == "PENDING_APPROVAL"
    assert not CouponOperation.objects.filter(op_type=OperationType.RETURN).exists()
    refusal = CommandRejection.objects.get(error_code="EVIDENCE_CHANGED")
    assert (refusal.op_type, refusal.actor, refusal.coupon_id_ref) == (
        "REFUND_APPROVE", "user:operator", coupon.pk)


def test_a_rejection_names_the_version_too(operator, coupon, ctx):
    decision = pending(coupon, ctx)
    stale = shown(decision.pk)
    moved_past_the_services(RefundCoupon, decision.pk, "recommended", rule_label="moved")

    answer = decide(operator, decision, "reject", "r-1", note="abuse", seen_entry=stale)

    assert answer.status_code == 409 and answer.json()["error"]["code"] == "EVIDENCE_CHANGED"
    assert RefundCoupon.objects.get(pk=decision.pk).status == "PENDING_APPROVAL"
    assert CommandRejection.objects.get().op_type == "REFUND_REJECT"


def test_an_approval_without_the_version_is_a_400_that_changes_nothing(operator, coupon, ctx):
    decision = pending(coupon, ctx)

    missing = decide(operator, decision, "approve", "a-1", action="RETURN")
    malformed = decide(operator, decision, "reject", "r-1", note="no", seen_entry="latest")

    for answer in (missing, malformed):
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == "VALIDATION_ERROR"
        assert list(answer.json()["error"]["details"]) == ["seen_entry"]
    assert "journal_tip as seen_entry" in missing.json()["error"]["details"]["seen_entry"][0]
    assert RefundCoupon.objects.get(pk=decision.pk).status == "PENDING_APPROVAL"
    assert coupon_row(coupon) == ("USED", 3)


def test_a_decision_edited_past_its_journal_is_refused_and_the_refusal_is_on_record(
        operator, coupon, ctx, broken_on_purpose):
    """Before: a refused refund approval (EVIDENCE_MISMATCH) left no trace in the rejection
    log, while a compensation's did."""
    from tests.refunds.compensations.test_journal_attacks import raw

    decision = pending(coupon, ctx)
    seen = shown(decision.pk)
    with past_the_triggers():  # the app's login may not: no grant, and the row is frozen
        raw("UPDATE refunds_refundcoupon SET risk_flag = false WHERE id = %s", decision.pk)
    broken_on_purpose.add(coupon.pk)

    answer = decide(operator, decision, "approve", "a-1", action="RETURN", seen_entry=seen)

    assert answer.json()["error"]["code"] == "EVIDENCE_MISMATCH"
    refusal = CommandRejection.objects.get()
    assert (refusal.op_type, refusal.error_code, refusal.actor, refusal.coupon_id_ref) == (
        "REFUND_APPROVE", "EVIDENCE_MISMATCH", "user:operator", coupon.pk)


def test_the_schema_requires_the_version_and_answers_it(api):
    schema = api.get("/api/v1/schema/?format=json").json()["components"]["schemas"]

    for name in ("ApproveInputRequest", "RejectInputRequest", "CompensationDecideInputRequest"):
        assert "seen_entry" in schema[name]["required"], name
        assert schema[name]["properties"]["seen_entry"]["pattern"] == "^[0-9a-f]{64}$"
    for name in ("RefundDecisionOutput", "CompensationOutput"):
        assert schema[name]["properties"]["journal_tip"]["type"] == "string", name

"""A finding's opening and closing are journal entries: an edit of its evidence past the
services is named by `verify_journal` and the coupon's check (invariant 9); the hourly
`last_seen_at` is not evidence and moves without one."""

import pytest
from django.db import DatabaseError, transaction

from coupons.evidence.replay import coupon_check
from coupons.models import FactType, Finding
from coupons.services import coupon_release
from operations.reconcile import finding_dismiss
from tests.app_role import past_the_triggers
from tests.conftest import lock
from tests.coupons.safety.test_evidence_journal import (
    edit_past_triggers,
    journal_of,
    verify_journal,
)
from tests.operations.reconciliation.conftest import fact_without_handler, reconcile

pytestmark = pytest.mark.django_db

HOLDS = ("Every journal entry holds and every journaled row is its fold.\n", "")


def test_a_finding_opened_and_closed_by_runs_is_two_entries(coupon, ctx, clock):
    _, proof = lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)
    reconcile()
    clock.advance(hours=1)
    reconcile()  # sees it again as it was: last_seen_at moves, no entry
    coupon_release(coupon_id=coupon.pk, lease=proof, ctx=ctx, reason="the order service retried")

    reconcile()

    finding = Finding.objects.get()
    assert [(entry.kind, entry.actor) for entry in journal_of(finding)] == [
        ("opened", "test"), ("closed", "test")]
    assert finding.status == "CLOSED" and finding.last_seen_at > finding.first_seen_at
    assert verify_journal() == HOLDS
    coupon.refresh_from_db()
    assert coupon_check(coupon, full=True).ok


def test_a_dismissed_finding_is_an_entry_under_the_operators_name(coupon, ctx, operator):
    lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)
    reconcile()
    finding = Finding.objects.get()

    finding_dismiss(finding_id=finding.pk, note="the order service will retry", ctx=operator)

    assert [(entry.kind, entry.actor) for entry in journal_of(finding)] == [
        ("opened", "test"), ("dismissed", "operator-1")]
    assert verify_journal() == HOLDS


def test_a_finding_s_summary_updated_past_the_services_is_named(coupon, ctx, api,
                                                                broken_on_purpose):
    """The app role holds UPDATE on findings (a run moves them), but the journal trigger
    refuses an UPDATE that is no step a summary may move; the same UPDATE past the triggers
    (the owner's) is no entry, and the row no longer folds."""
    broken_on_purpose.add(coupon.pk)
    lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)
    reconcile()
    finding = Finding.objects.get()
    with pytest.raises(DatabaseError, match="journal: "), transaction.atomic():
        Finding.objects.filter(pk=finding.pk).update(summary="nothing wrong here")
    with past_the_triggers():
        Finding.objects.filter(pk=finding.pk).update(summary="nothing wrong here")

    out, failed = verify_journal()
    body = api.get(f"/api/v1/coupons/{coupon.pk}/check").json()

    said = f'summary is "nothing wrong here", its journal says "{finding.summary}"'
    assert out == f"coupons.finding id={finding.pk}: {said}\n" and failed
    journaled = next(item for item in body["invariants"] if item["number"] == 9)
    assert journaled["problems"] == [f"finding {finding.pk}: {said}"]


def test_a_finding_closed_past_the_services_is_named(coupon, ctx, broken_on_purpose):
    broken_on_purpose.add(coupon.pk)
    lock(coupon, ctx, order_id="order-A")
    fact_without_handler("order-A", FactType.ORDER_CLOSED)
    reconcile()
    finding = Finding.objects.get()
    edit_past_triggers(Finding, finding.pk, status="CLOSED")

    assert coupon_check(coupon).violations[9] == [
        f'finding {finding.pk}: status is "CLOSED", its journal says "OPEN"']

"""Reconciliation under concurrency, on PostgreSQL with real threads."""

import pytest

from coupons.models import CouponOperation, Finding
from operations.reconcile import finding_apply
from tests.app_role import past_the_triggers
from tests.coupons.concurrency.threads import all_ok, race
from tests.operations.reconciliation.conftest import closed_order_still_locked, reconcile

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_runs_at_once_keep_one_open_finding_per_fault(template, ctx):
    finding = closed_order_still_locked(template, ctx)
    with past_the_triggers():  # a finding is never deleted; here forgotten by hand
        Finding.objects.filter(pk=finding.pk).delete()  # both runs find it anew

    runs = all_ok(race(reconcile, reconcile))

    assert Finding.objects.filter(status="OPEN").count() == 1
    assert sum(run.found_new + run.still_open for run in runs) >= 1


def test_two_operators_applying_at_once_release_once(template, ctx, operator):
    finding = closed_order_still_locked(template, ctx)

    outcomes = race(lambda: finding_apply(finding_id=finding.pk, ctx=operator),
                    lambda: finding_apply(finding_id=finding.pk, ctx=operator))

    assert sorted(kind for kind, _ in outcomes) == ["ok", "refused"]
    assert [value for kind, value in outcomes if kind == "refused"] == ["INVALID_STATE"]
    assert CouponOperation.objects.filter(coupon=finding.coupon, op_type="RELEASE").count() == 1

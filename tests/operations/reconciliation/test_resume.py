"""A long reconciliation shows its progress and, interrupted or killed, goes on from the last
batch it recorded instead of starting over."""

from io import StringIO

import pytest
from django.core.management import call_command

from coupons.models import Finding, FindingStatus, ReconciliationRun
from coupons.services import coupon_issue
from operations.reconcile.run import unfinished_run
from tests.conftest import lock
from tests.operations.reconciliation.conftest import fact_without_handler, reconcile

pytestmark = pytest.mark.django_db


class StopAfter:
    """A progress that stops the run (as Ctrl-C would) once `batches` batches are recorded."""

    def __init__(self, batches: int):
        self.batches = batches

    def advance(self, count: int) -> None:
        self.batches -= 1
        if self.batches == 0:
            raise KeyboardInterrupt


def issued(template, ctx, count: int) -> list:
    return [coupon_issue(template_id=template.pk, user_id=f"u{n}", ctx=ctx).coupon
            for n in range(count)]


def test_an_interrupted_run_keeps_what_it_recorded_and_resume_goes_on(template, ctx):
    coupons = issued(template, ctx, 7)
    lock(coupons[5], ctx, order_id="closed-unreleased")
    fact_without_handler("closed-unreleased", "OrderClosed")

    with pytest.raises(KeyboardInterrupt):
        reconcile(batch_size=3, progress=StopAfter(2))

    stopped = unfinished_run()
    assert (stopped.coupons_checked, stopped.last_coupon_id) == (6, coupons[5].pk)
    assert stopped.finished_at is None
    # The second batch held the fault: recorded before the interruption, not lost.
    assert stopped.found_new == 1

    out = StringIO()
    call_command("reconcile", "--resume", "--quiet", batch_size=3, stdout=out)

    assert f"resuming run {stopped.pk} after coupon {coupons[5].pk} (6 checked before)" in (
        out.getvalue())
    assert "checked 7 coupons" in out.getvalue()
    run = ReconciliationRun.objects.get(pk=stopped.pk)
    assert run.finished_at is not None and run.coupons_checked == 7
    assert ReconciliationRun.objects.count() == 1
    assert Finding.objects.filter(coupon=coupons[5], status=FindingStatus.OPEN).count() == 1


def test_resume_with_every_run_finished_starts_a_new_run(template, ctx):
    issued(template, ctx, 2)
    first = reconcile()

    call_command("reconcile", "--resume", "--quiet", stdout=StringIO())

    assert ReconciliationRun.objects.exclude(pk=first.pk).get().coupons_checked == 2


def test_the_command_says_how_to_resume_when_interrupted(template, ctx, monkeypatch):
    issued(template, ctx, 4)
    real = reconcile

    def interrupted(**kwargs):
        return real(batch_size=2, progress=StopAfter(1), run=kwargs["run"])

    monkeypatch.setattr("operations.management.commands.reconcile.reconcile_run",
                        interrupted)
    err = StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("reconcile", "--quiet", stdout=StringIO(), stderr=err)

    assert exit_.value.code == 130
    after = unfinished_run().last_coupon_id
    assert f"interrupted after coupon {after}: `manage.py reconcile --resume` goes on" in (
        err.getvalue())


def test_progress_goes_to_stderr_and_the_report_stays_on_stdout(template, ctx):
    issued(template, ctx, 3)
    out, err = StringIO(), StringIO()

    call_command("reconcile", batch_size=2, stdout=out, stderr=err)

    assert err.getvalue().startswith("reconcile: 3 of 3 coupons (100%)")
    assert "reconcile:" not in out.getvalue()

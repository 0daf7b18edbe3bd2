"""Scanners in loop mode: a scan every interval in one process, which survives its
database connection killed mid-scan."""

import threading
import time

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from prometheus_client import REGISTRY

from coupons.models import UserCoupon
from coupons.services import coupon_issue
from operations import scanners
from tests.conftest import lock
from tests.faults import terminate_this_threads_backend

LEASE = 60


def losses() -> float:
    return REGISTRY.get_sample_value(
        "coupons_worker_connection_losses_total",
        {"process": "scan_leases", "connection": "database"}) or 0


@pytest.mark.django_db(transaction=True)
def test_a_looping_lease_scanner_killed_mid_scan_releases_every_due_lease(
    template, ctx, clock, settings, monkeypatch,
):
    settings.WORKER_RETRY_MIN_SECONDS = 0.05
    coupons = [coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
               for _ in range(5)]
    for coupon in coupons:
        lock(coupon, ctx, order_id=f"order-{coupon.pk}", lease_seconds=LEASE)
    clock.advance(seconds=LEASE + 1)
    real, batches = scanners.settle_expired_leases, []

    def killed_in_the_second_batch(rows):
        batches.append(len(rows))
        if len(batches) == 2:
            terminate_this_threads_backend()
        return real(rows)

    monkeypatch.setattr(scanners, "settle_expired_leases", killed_in_the_second_batch)
    stop, reports, before = threading.Event(), [], losses()
    loop = threading.Thread(target=lambda: (
        scanners.scan_forever(scanners.scan_leases, stop=stop, interval=0.1, batch=2,
                              done=reports.append),
        connection.close()))
    loop.start()
    try:
        deadline = time.monotonic() + 20
        while UserCoupon.objects.filter(status="LOCKED").exists():
            assert time.monotonic() < deadline, "the due leases were not all released"
            time.sleep(0.1)
        assert loop.is_alive()
    finally:
        stop.set()
        loop.join(10)
    assert not loop.is_alive()
    assert set(UserCoupon.objects.values_list("status", flat=True)) == {"AVAILABLE"}
    assert losses() == before + 1
    assert sum(report.counts["released"] for report in reports) == 3  # the first batch's 2 before


@pytest.mark.django_db
def test_the_interval_must_be_positive():
    with pytest.raises(CommandError, match="--interval > 0"):
        call_command("scan_leases", "--loop", "--interval", "0")

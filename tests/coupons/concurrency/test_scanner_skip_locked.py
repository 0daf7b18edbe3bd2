"""Scanners never wait on a coupon another transaction holds, on PostgreSQL with a real holder.

A second connection keeps one due coupon's row locked (as a command in progress does) while a
scanner runs. The scanner must pass over it (SKIP LOCKED), finish the others and leave the held
one exactly as it was. The scanner's connection gets a short lock_timeout, so a scanner that
waits fails the test with a lock timeout instead of hanging it.
"""

import threading
import time

import pytest
from django.db import connection, transaction

from coupons.models import CouponOperation, UserCoupon
from coupons.services import coupon_issue
from coupons.write.rows import lock_coupon_row
from operations import scanners
from tests.conftest import lock

pytestmark = pytest.mark.django_db(transaction=True)

LEASE = 60
LOCK_TIMEOUT_SECONDS = 5
HOLD_TIMEOUT = 60


class RowHolder:
    """Holds one coupon's row lock in its own thread and connection until released."""

    def __init__(self, coupon_id):
        self.coupon_id = coupon_id
        self.holding = threading.Event()
        self.release = threading.Event()
        self.error = None
        self.thread = threading.Thread(target=self._hold)

    def _hold(self):
        try:
            with transaction.atomic():
                lock_coupon_row(self.coupon_id)  # the lock every command takes first
                self.holding.set()
                self.release.wait(HOLD_TIMEOUT)
        except Exception as error:  # noqa: BLE001 - reported by the test
            self.error = error
            self.holding.set()
        finally:
            connection.close()

    def __enter__(self):
        self.thread.start()
        assert self.holding.wait(HOLD_TIMEOUT) and self.error is None, self.error
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.thread.join(HOLD_TIMEOUT)
        assert not self.thread.is_alive(), "the row holder hung"


def scan_without_waiting(run_scan):
    """Run a scan on a connection that gives up on any row lock after LOCK_TIMEOUT_SECONDS;
    answers the report and how long the scan took."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET lock_timeout = '{LOCK_TIMEOUT_SECONDS}s'")
    try:
        started = time.monotonic()
        report = run_scan()
        return report, time.monotonic() - started
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")


def snapshot(coupon_id):
    coupon = UserCoupon.objects.get(pk=coupon_id)
    return (coupon.status, coupon.state_version, coupon.current_lock_id,
            CouponOperation.objects.filter(coupon_id=coupon_id).count())


def test_lease_scanner_skips_a_coupon_whose_row_is_held_and_releases_the_rest(
    template, ctx, clock,
):
    coupons = [coupon_issue(template_id=template.pk, user_id=f"u{i}", ctx=ctx).coupon
               for i in range(3)]
    for coupon in coupons:
        lock(coupon, ctx, order_id=f"order-{coupon.pk}", lease_seconds=LEASE)
    clock.advance(seconds=LEASE + 1)
    held = coupons[0].pk  # the first due in lease order: the scanner meets it first
    held_before = snapshot(held)

    with RowHolder(held):
        report, seconds = scan_without_waiting(lambda: scanners.scan_leases(batch=10))
        assert snapshot(held) == held_before

    assert seconds < LOCK_TIMEOUT_SECONDS
    assert report.counts == {"released": 2}
    statuses = dict(UserCoupon.objects.values_list("pk", "status"))
    assert statuses == {held: "LOCKED", coupons[1].pk: "AVAILABLE", coupons[2].pk: "AVAILABLE"}
    # Once the holder is done, the next scan finds the lease still due and ends it.
    assert scanners.scan_leases().counts == {"released": 1}


def test_expiry_scanner_skips_a_coupon_whose_row_is_held_and_expires_the_rest(
    template, ctx, clock,
):
    coupons = [coupon_issue(template_id=template.pk, user_id=f"u{i}", ctx=ctx).coupon
               for i in range(3)]
    clock.advance(days=31)  # past the template's 30-day validity
    held = coupons[0].pk
    held_before = snapshot(held)

    with RowHolder(held):
        report, seconds = scan_without_waiting(lambda: scanners.expire_coupons(batch=10))
        assert snapshot(held) == held_before

    assert seconds < LOCK_TIMEOUT_SECONDS
    assert report.counts == {"expired": 2}
    statuses = dict(UserCoupon.objects.values_list("pk", "status"))
    assert statuses == {held: "AVAILABLE", coupons[1].pk: "EXPIRED", coupons[2].pk: "EXPIRED"}
    assert scanners.expire_coupons().counts == {"expired": 1}

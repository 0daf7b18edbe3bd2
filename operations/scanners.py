"""Lease and expiry scanners: find due coupons, then issue ordinary commands for them.

A batch is read with FOR NO KEY UPDATE SKIP LOCKED on the coupon rows, the first lock in the
documented order, so two scanners (or a scanner and a command) never work one coupon at once.
The scanners never write a status: they call the services with the lock id, stored token hash
and the version the scanner read, so a lease renewed since is left alone. The lease scanner
releases a batch's unpaid leases with one set-based command (coupons/services/bulk_release.py),
the expiry scanner expires a batch with one (bulk_expire.py);
a paid lease (a compensating redeem) and a row the batch command left alone go through the
one-row commands, which record why they refuse. The presale expiry scanner issues no command:
it warns, once per lease, through the outbox (coupons/services/expiry_warning.py); the
final-payment window scanner reminds, once per order, the same way
(coupons/services/final_payment_reminder.py).

Loop mode (`--loop --interval N`, `scan_forever`): a scan every N seconds in one process, which
survives a lost database connection: logged, counted
(`coupons_worker_connection_losses_total`), retried after a capped back-off, never an exit.
"""

import contextlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils.dateparse import parse_datetime

from coupons import clock
from coupons.errors import CouponError, CouponExpired
from coupons.events.facts import order_payment, orders_paid
from coupons.ledger_reasons import reason
from coupons.models import (
    CouponStatus,
    ExpiryDuringLock,
    ExpiryWarning,
    FactType,
    FinalPaymentReminder,
    OrderFact,
    UserCoupon,
)
from coupons.services import (
    CommandContext,
    LeaseProof,
    coupon_expire,
    coupon_redeem,
    coupon_release,
)
from coupons.services.bulk_expire import coupons_expire
from coupons.services.bulk_release import coupons_release_expired
from coupons.services.expiry_warning import expiry_warning_send
from coupons.services.final_payment_reminder import final_payment_reminder_send
from operations.worker import DATABASE_ERRORS, Lost, run_until_stopped

LEASE_SCANNER = CommandContext(actor="system:lease-scanner")
EXPIRY_SCANNER = CommandContext(actor="system:expiry-scanner")

log = logging.getLogger(__name__)


@dataclass
class ScanReport:
    counts: Counter = field(default_factory=Counter)
    batches: int = 0
    seconds: float = 0.0

    @property
    def commands(self) -> int:
        return sum(n for outcome, n in self.counts.items() if outcome != "skipped")

    def summary(self) -> str:
        parts = ", ".join(f"{outcome} {n}" for outcome, n in sorted(self.counts.items()))
        rate = self.commands / self.seconds if self.seconds else 0.0
        return (f"{sum(self.counts.values())} due in {self.batches} batches: {parts or 'none'}"
                f" ({rate:.1f} commands/s)")


class Pacer:
    """Keeps to at most `rate` commands per second (None: as fast as the database goes)."""

    def __init__(self, rate: float | None):
        self.interval = 1.0 / rate if rate else 0.0
        self.next_at = time.monotonic()

    def wait_for(self, commands: int) -> None:
        """Called between batches, with no row lock held: a holder's REDEEM or RENEW must
        never queue behind a scanner that is only waiting for its rate."""
        if self.interval:
            self.next_at = max(self.next_at, time.monotonic()) + commands * self.interval
            pause = self.next_at - time.monotonic()
            if pause > 0:
                time.sleep(pause)


def scan(*, due, time_field, handle_batch, batch=100, rate=None, shard=0, shards=1, progress=None,
         limit=None) -> ScanReport:
    """Walk `due()` in (time_field, id) order with a keyset cursor, a batch per transaction.

    The cursor moves past every row handled or skipped, so a row that keeps being refused
    cannot stall the scan, and a rerun starts from the first row still due.
    """
    report, pacer, cursor = ScanReport(), Pacer(rate), None
    started = time.monotonic()
    while limit is None or sum(report.counts.values()) < limit:
        # Never read (and lock) more rows than the limit leaves: --limit stops mid-batch.
        size = batch if limit is None else min(batch, limit - sum(report.counts.values()))
        with transaction.atomic():
            rows = due().select_for_update(no_key=True, skip_locked=True, of=("self",))
            if shards > 1:
                rows = rows.alias(shard=F("id") % shards).filter(shard=shard)
            if cursor is not None:
                rows = rows.filter(Q(**{f"{time_field}__gt": cursor[0]})
                                   | Q(**{time_field: cursor[0], "id__gt": cursor[1]}))
            rows = list(rows.order_by(time_field, "id")[:size])
            if not rows:
                break
            # Before the commands run: a released row no longer has its lease end.
            cursor = (getattr(rows[-1], time_field), rows[-1].pk)
            report.counts.update(handle_batch(rows))
        pacer.wait_for(len(rows))
        report.batches += 1
        report.seconds = time.monotonic() - started
        if progress is not None:
            progress(report)
    report.seconds = time.monotonic() - started
    return report


def leases_due():
    return UserCoupon.objects.select_related("current_lock").filter(
        status=CouponStatus.LOCKED, lock_expires_at__lte=clock.now()
    )


def settle_expired_lease(coupon: UserCoupon) -> str:
    """Release an expired lease, or redeem it when the order's payment did arrive."""
    lease = LeaseProof.from_lock(coupon.current_lock, expected_version=coupon.state_version)
    payment = order_payment(lease.order_id)
    try:
        if payment is not None:
            coupon_redeem(coupon_id=coupon.pk, lease=lease, payment_id=payment.payment_id,
                          ctx=LEASE_SCANNER)
            return "redeemed"
        coupon_release(coupon_id=coupon.pk, lease=lease, ctx=LEASE_SCANNER,
                       reason=reason("lease_expired"))
        return "released"
    except CouponExpired:  # a STRICT coupon paid too late: the redeem released it to EXPIRED
        return "released"
    except CouponError:  # renewed, redeemed or released since we read it: not ours to end
        return "skipped"


def settle_expired_leases(coupons: list[UserCoupon]) -> Counter:
    """A batch: unpaid leases released together, the rest one by one (see the module doc)."""
    paid = orders_paid({coupon.current_lock.order_id for coupon in coupons})
    released = coupons_release_expired(
        coupons=[c for c in coupons if c.current_lock.order_id not in paid],
        ctx=LEASE_SCANNER, now=clock.now(), reason=reason("lease_expired"),
    )
    counts = Counter(released=len(released))
    for coupon in coupons:
        if coupon.pk not in released:
            counts[settle_expired_lease(coupon)] += 1
    return +counts


def coupons_due_to_expire():
    return UserCoupon.objects.filter(status=CouponStatus.AVAILABLE, valid_until__lte=clock.now())


def expire_due_coupons(coupons: list[UserCoupon]) -> Counter:
    """A batch expired together; a row the batch command left alone goes through the one-row
    command, which records why it refuses."""
    expired = coupons_expire(coupons=coupons, ctx=EXPIRY_SCANNER, now=clock.now())
    counts = Counter(expired=len(expired))
    for coupon in coupons:
        if coupon.pk not in expired:
            counts[expire_coupon(coupon)] += 1
    return +counts


def expire_coupon(coupon: UserCoupon) -> str:
    try:
        coupon_expire(coupon_id=coupon.pk, expected_version=coupon.state_version,
                      ctx=EXPIRY_SCANNER)
    except CouponError:
        return "skipped"
    return "expired"


def scan_leases(**options) -> ScanReport:
    return scan(due=leases_due, time_field="lock_expires_at",
                handle_batch=settle_expired_leases, **options)


def expire_coupons(**options) -> ScanReport:
    return scan(due=coupons_due_to_expire, time_field="valid_until",
                handle_batch=expire_due_coupons, **options)


def presale_leases_expiring_early():
    """LOCKED presale coupons (the order paid a deposit) under STRICT or SUBSTITUTE, not yet
    warned about, whose validity ends before their lease does. The lease lasts until the
    final-payment deadline plus grace, so this is a superset of the ones that fail: the
    deadline itself is in the deposit's payload, compared per batch."""
    return UserCoupon.objects.select_related("current_lock").filter(
        Exists(OrderFact.objects.filter(order_id=OuterRef("locked_order_id"),
                                        fact_type=FactType.DEPOSIT_PAID)),
        ~Exists(ExpiryWarning.objects.filter(lock_id=OuterRef("current_lock_id"))),
        status=CouponStatus.LOCKED,
        template_version__expiry_during_lock__in=(ExpiryDuringLock.STRICT,
                                                  ExpiryDuringLock.SUBSTITUTE),
        valid_until__lt=F("lock_expires_at"),
    )


def warn_expiring_presale_leases(coupons: list[UserCoupon]) -> Counter:
    deadlines = {
        order_id: parse_datetime(payload["final_payment_deadline"])
        for order_id, payload in OrderFact.objects.filter(
            order_id__in={c.locked_order_id for c in coupons}, fact_type=FactType.DEPOSIT_PAID,
        ).values_list("order_id", "payload")
    }
    # The batch's NOT EXISTS was read before its rows were locked: another scanner may have
    # warned a lease and committed in between, and this fresh read sees it.
    warned = set(ExpiryWarning.objects.filter(lock_id__in={c.current_lock_id for c in coupons})
                 .values_list("lock_id", flat=True))
    counts, now = Counter(), clock.now()
    for coupon in coupons:
        if coupon.current_lock_id in warned:
            counts["skipped"] += 1
            continue
        deadline = deadlines.get(coupon.locked_order_id)
        if deadline is None:  # its deposit pruned since the batch was read
            counts["skipped"] += 1
            continue
        if coupon.valid_until >= deadline:
            counts["fine"] += 1  # expires in the grace after the deadline: paid in time, or closed
            continue
        expiry_warning_send(coupon=coupon, final_payment_deadline=deadline, now=now)
        counts["warned"] += 1
    return counts


def presale_leases_not_reminded():
    """LOCKED coupons of presale orders (a deposit was paid) whose order was not reminded of
    its final-payment window yet; whether the window has opened is in the deposit's payload,
    compared per batch."""
    return UserCoupon.objects.select_related("current_lock").filter(
        Exists(OrderFact.objects.filter(order_id=OuterRef("locked_order_id"),
                                        fact_type=FactType.DEPOSIT_PAID)),
        ~Exists(FinalPaymentReminder.objects.filter(order_id=OuterRef("locked_order_id"))),
        status=CouponStatus.LOCKED,
    )


def remind_open_windows(coupons: list[UserCoupon]) -> Counter:
    deposits = {order_id: (payload, paid_at) for order_id, payload, paid_at in
                OrderFact.objects.filter(order_id__in={c.locked_order_id for c in coupons},
                                         fact_type=FactType.DEPOSIT_PAID)
                .values_list("order_id", "payload", "occurred_at")}
    # As for the warnings: a fresh read after the rows are locked sees a concurrent reminder.
    reminded = set(FinalPaymentReminder.objects.filter(order_id__in=deposits)
                   .values_list("order_id", flat=True))
    counts, now = Counter(), clock.now()
    for coupon in coupons:
        if coupon.locked_order_id in reminded:
            counts["skipped"] += 1
            continue
        if coupon.locked_order_id not in deposits:  # its deposit pruned since the batch was read
            counts["skipped"] += 1
            continue
        payload, paid_at = deposits[coupon.locked_order_id]
        deadline = parse_datetime(payload["final_payment_deadline"])
        # Without an opening time the window opened with the deposit.
        opens_at = parse_datetime(payload.get("final_payment_opens_at") or "") or paid_at
        if opens_at > now:
            counts["not_yet"] += 1
            continue
        if deadline <= now:
            counts["closed"] += 1  # too late to remind: the deadline passed
            continue
        final_payment_reminder_send(coupon=coupon, opens_at=opens_at, deadline=deadline,
                                    now=now)
        counts["reminded"] += 1
    return counts


def scan_final_payment_windows(**options) -> ScanReport:
    return scan(due=presale_leases_not_reminded, time_field="lock_expires_at",
                handle_batch=remind_open_windows, **options)


def scan_presale_expiry(**options) -> ScanReport:
    return scan(due=presale_leases_expiring_early, time_field="valid_until",
                handle_batch=warn_expiring_presale_leases, **options)


def scan_forever(scan_once: Callable[..., ScanReport], *, stop: threading.Event,
                 interval: float, done: Callable[[ScanReport], None] = lambda report: None,
                 report=log.warning, **options) -> None:
    """Run `scan_once(**options)` every `interval` seconds until `stop`. A lost database
    connection ends that scan only (its committed batches stay; the rest is still due, so
    the next scan takes it): the loss is reported and counted, and the next scan follows a
    capped back-off instead of the interval."""
    process = scan_once.__name__

    def step() -> None:
        try:
            result = scan_once(**options)
        except DATABASE_ERRORS as error:
            # Outside a request nothing closes a dead connection: the next scan opens one.
            with contextlib.suppress(*DATABASE_ERRORS):
                connection.close()
            raise Lost("database", error, describe=lambda delay, error=error: (
                f"{process}: database error {error!r}; retrying in {delay:.1f}s")) from error
        done(result)
        stop.wait(interval)

    run_until_stopped(step, process=process, stop=stop, report=report)

"""Reads for the console's dashboard: what needs a person now, and the last day's traffic.

Every figure is one grouped or aggregated query, so the page costs the same number of queries
however many coupons, ledger rows or outbox events there are.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count
from django.db.models.functions import TruncHour

from coupons import clock
from coupons.models import (
    CommandRejection,
    ConflictCase,
    CouponOperation,
    CouponStatus,
    UserCoupon,
)
from coupons.selectors import (
    coupon_counts_by_state,
    expiry_warning_counts,
    open_case_count,
    open_cases_oldest,
)
from operations.selectors import outbox_lag
from refunds.selectors import pending_approval_counts

EXPIRING_WINDOW = timedelta(hours=1)
CHART_HOURS = 24
# The dashboard lists at most this many leases and cases; the rest are a count and a link.
LISTED = 8


@dataclass(frozen=True)
class HourBucket:
    starts_at: datetime
    commands: int
    refusals: int


@dataclass(frozen=True)
class Dashboard:
    now: datetime
    coupons_by_state: list[tuple[str, int]]
    open_cases: int
    oldest_open_cases: list[ConflictCase]
    refunds_pending: int
    compensations_pending: int
    expiring_leases: list[UserCoupon]
    expiring_lease_count: int
    outbox_unpublished: int
    outbox_oldest_unpublished_at: datetime | None
    # CouponExpiresBeforeFinalPayment warnings sent, and those whose buyer has not paid yet.
    expiry_warnings_sent: int
    expiry_warnings_open: int
    hours: list[HourBucket]

    @property
    def coupon_total(self) -> int:
        return sum(count for _, count in self.coupons_by_state)

    @property
    def pending_approvals(self) -> int:
        return self.refunds_pending + self.compensations_pending


def dashboard_get() -> Dashboard:
    now = clock.now()
    expiring = UserCoupon.objects.filter(
        status=CouponStatus.LOCKED, lock_expires_at__gte=now,
        lock_expires_at__lt=now + EXPIRING_WINDOW,
    )
    outbox = outbox_lag()
    # From the warnings themselves: their outbox rows are pruned once published.
    warnings_sent, warnings_open = expiry_warning_counts()
    refunds_pending, compensations_pending = pending_approval_counts()
    return Dashboard(
        now=now,
        coupons_by_state=list(coupon_counts_by_state().items()),
        open_cases=open_case_count(),
        oldest_open_cases=open_cases_oldest(limit=LISTED),
        refunds_pending=refunds_pending,
        compensations_pending=compensations_pending,
        expiring_leases=list(expiring.order_by("lock_expires_at", "id")[:LISTED]),
        expiring_lease_count=expiring.count(),
        outbox_unpublished=outbox.unpublished,
        outbox_oldest_unpublished_at=outbox.oldest_at,
        expiry_warnings_sent=warnings_sent,
        expiry_warnings_open=warnings_open,
        hours=hourly_traffic(now),
    )


def hourly_traffic(now: datetime) -> list[HourBucket]:
    """Ledger operations and refused commands per hour, the current hour last.

    The database groups by hour; the 24 buckets are filled in here so quiet hours show as 0.
    """
    current_hour = now.replace(minute=0, second=0, microsecond=0)
    since = current_hour - timedelta(hours=CHART_HOURS - 1)
    commands = per_hour(CouponOperation.objects.filter(created_at__gte=since, created_at__lte=now))
    refusals = per_hour(CommandRejection.objects.filter(created_at__gte=since,
                                                        created_at__lte=now))
    starts = [since + timedelta(hours=i) for i in range(CHART_HOURS)]
    return [HourBucket(hour, commands.get(hour, 0), refusals.get(hour, 0)) for hour in starts]


def per_hour(rows) -> dict[datetime, int]:
    grouped = rows.annotate(hour=TruncHour("created_at")).values("hour").annotate(n=Count("id"))
    return {row["hour"]: row["n"] for row in grouped.order_by()}

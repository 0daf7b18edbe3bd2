"""Reads of what the background processes keep: reconciliation findings and runs, the outbox
lag. The console, the metrics and the commands read them from here."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Min, QuerySet

from coupons import clock
from coupons.models import Finding, FindingStatus, OutboxEvent, ReconciliationRun, Severity


def finding_list() -> QuerySet[Finding]:
    """Reconciliation findings, worst first (P0 sorts before P1), oldest first within one."""
    return Finding.objects.order_by("severity", "first_seen_at", "id")


def finding_open_counts() -> dict[str, int]:
    """Open findings per severity, every severity named (0 included): for the page, the
    command's summary and a metrics gauge."""
    counts = dict(Finding.objects.filter(status=FindingStatus.OPEN).values_list("severity")
                  .annotate(n=Count("id")))
    return {severity: counts.get(severity, 0) for severity in Severity.values}


def reconciliation_last_run() -> ReconciliationRun | None:
    finished = ReconciliationRun.objects.exclude(finished_at=None)
    return finished.order_by("-finished_at", "-id").first()


@dataclass
class Lag:
    """Outbox rows the relay has not published yet, and when the oldest was written."""

    unpublished: int
    oldest_at: datetime | None

    @property
    def oldest_age(self) -> timedelta | None:
        return clock.now() - self.oldest_at if self.oldest_at else None

    def __str__(self):
        age = f"{self.oldest_age.total_seconds():.1f}s" if self.oldest_at else "-"
        return f"{self.unpublished} unpublished, oldest {age}"


def outbox_lag() -> Lag:
    """One read for the relay's reports, the metrics and the dashboard."""
    lag = OutboxEvent.objects.filter(published_at__isnull=True).aggregate(
        n=Count("id"), oldest=Min("created_at"))
    return Lag(lag["n"], lag["oldest"])

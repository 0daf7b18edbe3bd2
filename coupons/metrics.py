"""Prometheus signals of the coupon service (README "Operating it").

Two kinds:
- Counters of what this process did (commands by type and outcome, refusals by code, relay
  publish failures, facts consumed), incremented when the transaction commits, so a rolled-back
  command is never counted. The web process shows its own at /metrics; the relay and the
  consumer show theirs with `--metrics-port` (bound to 127.0.0.1).
- Gauges of the state, read from the database at scrape time (`StateCollector`), so they are
  right whichever process changed it: the outbox backlog and its age, expired leases nobody
  released, open conflict cases, presale expiry warnings. Each is one indexed count.
  Reconciliation findings are not here yet: this branch has no findings model.
"""

import collections
import os

from django.db import transaction
from django.db.models import Count, Min
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from coupons import clock

COMMANDS = Counter("coupons_commands", "Coupon commands by type and outcome (ok or refused).",
                   ["command", "outcome"])
REFUSALS = Counter("coupons_refusals", "Refused coupon commands by type and error code.",
                   ["command", "code"])
RELAY_PUBLISH_FAILURES = Counter(
    "coupons_relay_publish_failures",
    "Outbox rows the broker refused or did not confirm, and failed broker connections.",
    ["stage"])
FACTS_CONSUMED = Counter("coupons_facts_consumed", "Broker facts by what became of them.",
                         ["outcome"])


def count_on_commit(counter: Counter, amount: int = 1, **labels) -> None:
    transaction.on_commit(lambda: counter.labels(**labels).inc(amount))


def commands_done(op_types) -> None:
    """Ledger rows just written: one successful command each."""
    for op_type, done in collections.Counter(op_types).items():
        count_on_commit(COMMANDS, done, command=op_type, outcome="ok")


def command_refused(op_type: str, code: str) -> None:
    count_on_commit(COMMANDS, command=op_type, outcome="refused")
    count_on_commit(REFUSALS, command=op_type, code=code)


class StateCollector:
    """Reads the gauges from the database each scrape."""

    def describe(self):
        return []  # registering must not query the database

    def collect(self):
        from coupons.models import (
            CaseStatus,
            ConflictCase,
            CouponStatus,
            ExpiryWarning,
            LockStatus,
            OutboxEvent,
            UserCoupon,
        )

        now = clock.now()
        backlog = OutboxEvent.objects.filter(published_at__isnull=True).aggregate(
            rows=Count("id"), oldest=Min("created_at"))
        yield GaugeMetricFamily("coupons_outbox_unpublished", "Outbox rows not yet published.",
                                value=backlog["rows"])
        age = (now - backlog["oldest"]).total_seconds() if backlog["oldest"] else 0.0
        yield GaugeMetricFamily("coupons_outbox_oldest_unpublished_age_seconds",
                                "Age of the oldest unpublished outbox row (0: none).", value=age)
        yield GaugeMetricFamily(
            "coupons_leases_expired_unreleased",
            "LOCKED coupons whose lease has ended and that no scanner released yet.",
            value=UserCoupon.objects.filter(status=CouponStatus.LOCKED,
                                            lock_expires_at__lte=now).count())
        yield GaugeMetricFamily(
            "coupons_conflict_cases_open", "Conflict cases waiting for an operator.",
            value=ConflictCase.objects.filter(status=CaseStatus.OPEN).count())
        yield CounterMetricFamily(
            "coupons_expiry_warnings", "CouponExpiresBeforeFinalPayment warnings sent.",
            value=ExpiryWarning.objects.count())
        yield GaugeMetricFamily(
            "coupons_expiry_warnings_open",
            "Warned presale leases still active (the buyer has not paid or closed yet).",
            value=ExpiryWarning.objects.filter(lock__status=LockStatus.ACTIVE).count())


STATE = CollectorRegistry(auto_describe=False)
STATE.register(StateCollector())


def metrics_page() -> bytes:
    """This process's (or, under PROMETHEUS_MULTIPROC_DIR, every worker's) counters and
    django-prometheus's HTTP and database metrics, then the state gauges."""
    if "PROMETHEUS_MULTIPROC_DIR" in os.environ:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    return generate_latest(registry) + generate_latest(STATE)

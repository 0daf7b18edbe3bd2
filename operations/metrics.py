"""Prometheus signals of the coupon service (docs/operating.md).

Two kinds:
- Counters of what this process did (commands by type and outcome and refusals by code, which
  the core counts in coupons/counters.py; relay publish failures, facts consumed), incremented
  when the transaction commits, so a rolled-back command is never counted; and the connections
  a long-running process lost and reopened (coupons/counters.py, counted when they happen).
  The web process shows its own at /metrics; the relay and the consumer show theirs with
  `--metrics-port` (bound to 127.0.0.1).
- Gauges of the state, read from the database at scrape time (`StateCollector`), so they are
  right whichever process changed it: the outbox backlog and its age, expired leases nobody
  released, open conflict cases, presale expiry warnings, open reconciliation findings by
  severity. Each is one indexed count.
"""

import os

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    generate_latest,
    multiprocess,
    start_http_server,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from coupons import clock

RELAY_PUBLISH_FAILURES = Counter(
    "coupons_relay_publish_failures",
    "Outbox rows the broker refused or did not confirm, and failed broker connections.",
    ["stage"])
FACTS_CONSUMED = Counter("coupons_facts_consumed", "Broker facts by what became of them.",
                         ["outcome"])


class StateCollector:
    """Reads the gauges from the database each scrape."""

    def describe(self):
        return []  # registering must not query the database

    def collect(self):
        # Imported here: the services import this module (to count commands) and these
        # modules import the services.
        from coupons import selectors

        lag = selectors.outbox_lag()
        yield GaugeMetricFamily("coupons_outbox_unpublished", "Outbox rows not yet published.",
                                value=lag.unpublished)
        age = lag.oldest_age.total_seconds() if lag.oldest_age is not None else 0.0
        yield GaugeMetricFamily("coupons_outbox_oldest_unpublished_age_seconds",
                                "Age of the oldest unpublished outbox row (0: none).", value=age)
        yield GaugeMetricFamily(
            "coupons_leases_expired_unreleased",
            "LOCKED coupons whose lease has ended and that no scanner released yet.",
            value=selectors.expired_leases_unreleased_count(now=clock.now()))
        yield GaugeMetricFamily("coupons_conflict_cases_open",
                                "Conflict cases waiting for an operator.",
                                value=selectors.open_case_count())
        findings = GaugeMetricFamily("coupons_reconciliation_findings_open",
                                     "Open reconciliation findings by severity.",
                                     labels=["severity"])
        for severity, count in selectors.finding_open_counts().items():
            findings.add_metric([severity], count)
        yield findings
        sent, still_open = selectors.expiry_warning_counts()
        yield CounterMetricFamily("coupons_expiry_warnings",
                                  "CouponExpiresBeforeFinalPayment warnings sent.", value=sent)
        yield GaugeMetricFamily(
            "coupons_expiry_warnings_open",
            "Warned presale leases still active (the buyer has not paid or closed yet).",
            value=still_open)


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


def serve_process_metrics(port: int) -> None:
    """A worker's own counters (relay, consumer) on 127.0.0.1:`port`, for a Prometheus agent
    on the same host: never on a public address. The state gauges are the web's /metrics."""
    start_http_server(port, addr="127.0.0.1")

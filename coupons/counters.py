"""Prometheus counters of the commands this process ran (served at /metrics by
operations/metrics.py), incremented when the command's transaction commits, so a rolled-back
command is never counted."""

import collections

from django.db import transaction
from prometheus_client import Counter

COMMANDS = Counter("coupons_commands", "Coupon commands by type and outcome (ok or refused).",
                   ["command", "outcome"])
REFUSALS = Counter("coupons_refusals", "Refused coupon commands by type and error code.",
                   ["command", "code"])


def count_on_commit(counter: Counter, amount: int = 1, **labels) -> None:
    transaction.on_commit(lambda: counter.labels(**labels).inc(amount))


def commands_done(op_types) -> None:
    """Ledger rows just written: one successful command each."""
    for op_type, done in collections.Counter(op_types).items():
        count_on_commit(COMMANDS, done, command=op_type, outcome="ok")


def command_refused(op_type: str, code: str) -> None:
    count_on_commit(COMMANDS, command=op_type, outcome="refused")
    count_on_commit(REFUSALS, command=op_type, code=code)

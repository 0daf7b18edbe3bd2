"""Capped back-off of the long-running processes (relay, fact consumer, scanners in loop mode)
after a lost database or broker connection: they wait, reconnect and go on, never exit."""

from django.conf import settings
from django.db import InterfaceError, OperationalError

# What a lost or refused database connection raises through Django.
DATABASE_ERRORS = (OperationalError, InterfaceError)


def retry_delay(failures: int) -> float:
    """Seconds to wait after the `failures`-th failure in a row: doubling, capped."""
    return min(settings.WORKER_RETRY_MIN_SECONDS * 2 ** (failures - 1),
               settings.WORKER_RETRY_MAX_SECONDS)


class Backoff:
    """Failures in a row; `next()` answers the wait before the next attempt."""

    def __init__(self):
        self.failures = 0

    def next(self) -> float:
        self.failures += 1
        return retry_delay(self.failures)

    def reset(self) -> None:
        self.failures = 0

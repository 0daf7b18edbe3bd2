"""The one clock every service reads, so tests and demo histories move time instead of sleeping."""

import threading
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.utils import timezone


class SystemClock:
    def now(self) -> datetime:
        return timezone.now()


class FrozenClock:
    """A clock that stands still until told to move. Shared across threads on purpose."""

    def __init__(self, start: datetime):
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, **delta) -> datetime:
        with self._lock:
            self._now += timedelta(**delta)
            return self._now

    def set(self, moment: datetime) -> None:
        with self._lock:
            self._now = moment


_current = SystemClock()


def now() -> datetime:
    return _current.now()


@contextmanager
def use_clock(clock):
    global _current
    previous, _current = _current, clock
    try:
        yield clock
    finally:
        _current = previous

"""Which requests read from a replica, read-your-writes, and the lag fallback (docs/deploy.md).

A GET or HEAD of a console page or of the API reads from a replica (common/replica_router.py)
when one is configured and it is close enough:
- its replay lag is at most DATABASE_REPLICA_MAX_LAG_SECONDS, else the primary answers;
- the caller (a browser's session, an API client's key) wrote in the last
  DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS: then the replica must have replayed the primary's
  WAL position taken after that write, else the primary answers. So a person who just acted
  sees the result of their act on the next page, and everyone else may see it a moment later.
A replica that fails to answer is left alone for REPLICA_RETRY_SECONDS. A page read from a
replica says how old its data is ("Data as of ...", and the X-Data-As-Of header).
"""

import hashlib
import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from common.replica_router import reading_from

logger = logging.getLogger(__name__)

READ_METHODS = frozenset({"GET", "HEAD"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Console pages that prepare a write (editors, confirmations) or change the session: they read
# what the next POST is checked against, so they read it where that POST will write.
PRIMARY_PAGES = frozenset({
    "login", "logout", "language", "policy_new", "policy_draft_new", "policy_version_edit",
    "policy_version_publish", "compensation_propose",
})
REPLICA_RETRY_SECONDS = 10
DATA_AS_OF_HEADER = "X-Data-As-Of"

# One round trip on the replica: is it still a replica, how far it has replayed the
# primary's WAL, and as of when is its data. Caught up with a live WAL receiver: as of now;
# else as of the last transaction it replayed (NULL before the first).
STATE_SQL = """
SELECT pg_is_in_recovery(),
       pg_last_wal_replay_lsn()::text,
       CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()
                 AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE pid IS NOT NULL)
            THEN now() ELSE pg_last_xact_replay_timestamp() END,
       now()
"""

# Process-local: replica alias -> monotonic time before which it is not asked again.
_resting: dict[str, float] = {}


@dataclass(frozen=True)
class ReplicaRead:
    alias: str
    as_of: datetime


@dataclass(frozen=True)
class ReplicaState:
    """What STATE_SQL read on one replica."""

    in_recovery: bool  # false: a promoted copy, which no longer follows the primary
    replayed: str | None  # the WAL position it has replayed ("16/B374D848")
    as_of: datetime | None  # as of when its data is (None: nothing replayed yet)
    now: datetime  # its clock


def wal_position(lsn: str) -> int:
    """A WAL position as PostgreSQL prints one (two hex halves, "16/B374D848") as a number:
    compared as text, "0/FFFFFFFF" would come after "1/0"."""
    high, _, low = lsn.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


def has_replayed(state: ReplicaState, written: str | None) -> bool:
    """Read-your-writes: the caller's last write (None: none recent) is in the replica."""
    if written is None:
        return True
    return state.replayed is not None and wal_position(state.replayed) >= wal_position(written)


def within_lag(state: ReplicaState, max_lag_seconds: float) -> bool:
    return state.as_of is not None and (
        (state.now - state.as_of).total_seconds() <= max_lag_seconds)


def replica_serves(state: ReplicaState, written: str | None, max_lag_seconds: float) -> bool:
    """May this replica answer a caller whose last write is at `written`?"""
    return state.in_recovery and has_replayed(state, written) and within_lag(
        state, max_lag_seconds)


def caller_key(request, response=None) -> str | None:
    """Who made the request, as a cache key: the session (the new one a sign-in just set, if
    any) or the API key. Hashed: neither is kept in the cache as it was sent."""
    session_cookie = settings.SESSION_COOKIE_NAME
    credential = ""
    if response is not None and session_cookie in response.cookies:
        credential = response.cookies[session_cookie].value
    credential = (credential or request.COOKIES.get(session_cookie, "")
                  or request.headers.get("Authorization", ""))
    if not credential:
        return None
    return "replica-ryw:" + hashlib.sha256(credential.encode()).hexdigest()


def remember_write(request, response) -> None:
    """After a write request, the primary's WAL position: the caller's reads wait for it."""
    key = caller_key(request, response)
    if key is None:
        return
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_insert_lsn()::text")
            (lsn,) = cursor.fetchone()
    except DatabaseError:
        logger.warning("replicas: could not read the primary's WAL position after a write")
        return
    cache.set(key, lsn, timeout=settings.DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS)


def choose_replica(written_lsn: str | None) -> ReplicaRead | None:
    """A replica that has replayed `written_lsn` and lags at most the bound, or None."""
    aliases = list(settings.DATABASE_REPLICA_ALIASES)
    random.shuffle(aliases)  # spread the reads over the replicas
    for alias in aliases:
        if _resting.get(alias, 0) > time.monotonic():
            continue
        state = replica_state(alias)
        if state is None:
            _resting[alias] = time.monotonic() + REPLICA_RETRY_SECONDS
            continue
        if replica_serves(state, written_lsn, settings.DATABASE_REPLICA_MAX_LAG_SECONDS):
            return ReplicaRead(alias, state.as_of)
    return None


def replica_state(alias: str) -> ReplicaState | None:
    """The replica's state, or None when it does not answer."""
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute(STATE_SQL)
            return ReplicaState(*cursor.fetchone())
    except DatabaseError:
        logger.warning("replicas: %s did not answer; reading from the primary", alias)
        connections[alias].close()
        return None


def may_read_from_replica(request) -> bool:
    match = request.resolver_match
    if request.method not in READ_METHODS or match is None or not match.namespaces:
        return False
    area = match.namespaces[0]
    return area == "api" or (area == "console" and match.url_name not in PRIMARY_PAGES)


class ReplicaReadsMiddleware:
    """Installed only when DATABASE_REPLICA_URLS names a replica (config/settings.py)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            response = self.get_response(request)
        finally:
            reading_from.set(None)  # the thread's next request starts on the primary
        read = getattr(request, "replica_read", None)
        if read is not None:
            response[DATA_AS_OF_HEADER] = read.as_of.isoformat()
        elif request.method in WRITE_METHODS:
            remember_write(request, response)
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        if not may_read_from_replica(request):
            return None
        key = caller_key(request)
        read = choose_replica(cache.get(key) if key else None)
        if read is not None:
            request.replica_read = read
            reading_from.set(read.alias)
        return None


def data_as_of(request) -> dict:
    """Context processor: when the page's data came from a replica, as of when."""
    read = getattr(request, "replica_read", None)
    return {"data_as_of": read.as_of if read is not None else None}

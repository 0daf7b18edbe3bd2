"""Which requests read from a replica, read-your-writes, and the lag fallback (docs/deploy.md).

A GET or HEAD of a console page or of the API reads from a replica (common/replica_router.py)
when one is configured and it is close enough:
- its data is at most DATABASE_REPLICA_MAX_LAG_SECONDS old, else the primary answers. How old is
  measured against the primary, never by the replica alone: a replica whose WAL stream stalled
  with its connection up has replayed all it received and cannot tell that it is behind;
- the caller (a browser, an API client) wrote in the last
  DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS: the answer to that write carried the primary's WAL
  position after it, signed (a cookie, the X-Consistency-Token header), and the caller's reads
  go to a replica that has replayed it, else to the primary. The position travels with the
  caller, so whichever server process answers next knows it. Everyone else may see a write a
  moment later.
A replica that fails to answer is left alone for REPLICA_RETRY_SECONDS. A page read from a
replica says how old its data is ("Data as of ...", and the X-Data-As-Of header).
"""

import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core import signing
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
# The caller's last write position: an API client sends back the header of its last write's
# answer; a browser holds the cookie.
CONSISTENCY_HEADER = "X-Consistency-Token"
CONSISTENCY_COOKIE = "consistency_token"
CONSISTENCY_SALT = "common.replica_reads.consistency"

# On the primary, before any replica is asked: its clock, and how far its WAL reached then.
# now() is the statement's start, so every commit acknowledged before it lies before that
# position.
PRIMARY_POSITION_SQL = "SELECT now(), pg_current_wal_insert_lsn()::text"
# One round trip on the replica: is it still a replica, how far it has replayed the primary's
# WAL, the commit time of the last transaction it replayed (NULL before the first), its clock.
STATE_SQL = """
SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text, pg_last_xact_replay_timestamp(),
       now()
"""

# Process-local: replica alias -> monotonic time before which it is not asked again.
_resting: dict[str, float] = {}


@dataclass(frozen=True)
class ReplicaRead:
    alias: str
    as_of: datetime


@dataclass(frozen=True)
class PrimaryPosition:
    """What PRIMARY_POSITION_SQL read on the primary."""

    at: datetime  # its clock
    reached: str  # how far its WAL reached then ("16/B374D848")


@dataclass(frozen=True)
class ReplicaState:
    """What STATE_SQL read on one replica."""

    in_recovery: bool  # false: a promoted copy, which no longer follows the primary
    replayed: str | None  # the WAL position it has replayed ("16/B374D848")
    last_commit: datetime | None  # commit time of the last transaction it replayed
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


def replica_as_of(state: ReplicaState, primary: PrimaryPosition | None) -> datetime | None:
    """As of when the replica's data is: a time before which every acknowledged commit is in it.

    Replayed as far as the primary's WAL reached at a moment: that moment (an idle primary's
    replica is current). Else the commit time of the last transaction it replayed: a commit
    acknowledged before that lies before it in the WAL. Never the replica's own "caught up":
    with its stream stalled, it has replayed all it received and is still behind.
    """
    caught_up = primary is not None and has_replayed(state, primary.reached)
    times = [moment for moment in (primary.at if caught_up else None, state.last_commit)
             if moment is not None]
    return max(times, default=None)


def replica_serves(state: ReplicaState, as_of: datetime | None, written: str | None,
                   max_lag_seconds: float) -> bool:
    """May this replica, with data as of `as_of`, answer a caller whose last write is at
    `written`?"""
    return (state.in_recovery and has_replayed(state, written) and as_of is not None
            and (state.now - as_of).total_seconds() <= max_lag_seconds)


def primary_position() -> PrimaryPosition | None:
    """The primary's clock and WAL position, or None when it does not answer (a replica is
    then judged by its last replayed commit alone)."""
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(PRIMARY_POSITION_SQL)
            return PrimaryPosition(*cursor.fetchone())
    except DatabaseError:
        logger.warning("replicas: could not read the primary's WAL position")
        return None


def choose_replica(written_lsn: str | None) -> ReplicaRead | None:
    """A replica that has replayed `written_lsn` and lags at most the bound, or None."""
    aliases = list(settings.DATABASE_REPLICA_ALIASES)
    random.shuffle(aliases)  # spread the reads over the replicas
    primary = None
    for alias in aliases:
        if _resting.get(alias, 0) > time.monotonic():
            continue
        # Asked before the replica, once: the replica's answer comes after it, so a replica that
        # has replayed that far had the primary's data of that moment.
        primary = primary or primary_position()
        state = replica_state(alias)
        if state is None:
            _resting[alias] = time.monotonic() + REPLICA_RETRY_SECONDS
            continue
        as_of = replica_as_of(state, primary)
        if replica_serves(state, as_of, written_lsn, settings.DATABASE_REPLICA_MAX_LAG_SECONDS):
            return ReplicaRead(alias, as_of)
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


def consistency_token(lsn: str) -> str:
    """The signed WAL position a write's answer carries (signed: a caller cannot send every
    read to the primary with a position the WAL has not reached, nor keep one past its time)."""
    return signing.TimestampSigner(salt=CONSISTENCY_SALT).sign(lsn)


def written_position(request) -> str | None:
    """The newest of the WAL positions the caller sent back (cookie, header) that is signed
    and younger than DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS; None: no recent write."""
    signer = signing.TimestampSigner(salt=CONSISTENCY_SALT)
    positions = []
    for token in (request.COOKIES.get(CONSISTENCY_COOKIE),
                  request.headers.get(CONSISTENCY_HEADER)):
        if not token:
            continue
        try:
            lsn = signer.unsign(
                token, max_age=settings.DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS)
            wal_position(lsn)
        except (signing.BadSignature, ValueError):
            continue  # expired, altered, another server's: no recent write to wait for
        positions.append(lsn)
    return max(positions, key=wal_position, default=None)


def remember_write(request, response) -> None:
    """After a write request, the primary's WAL position, signed, in the answer: the caller's
    reads wait for it."""
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_insert_lsn()::text")
            (lsn,) = cursor.fetchone()
    except DatabaseError:
        logger.warning("replicas: could not read the primary's WAL position after a write")
        return
    token = consistency_token(lsn)
    response[CONSISTENCY_HEADER] = token
    session_cookie = settings.SESSION_COOKIE_NAME
    if session_cookie in request.COOKIES or session_cookie in response.cookies:
        # A browser: it sends the cookie back by itself. HttpOnly, as the session's.
        response.set_cookie(
            CONSISTENCY_COOKIE, token,
            max_age=settings.DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS,
            secure=settings.SESSION_COOKIE_SECURE, httponly=True, samesite="Lax")


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
        read = choose_replica(written_position(request))
        if read is not None:
            request.replica_read = read
            reading_from.set(read.alias)
        return None


def data_as_of(request) -> dict:
    """Context processor: when the page's data came from a replica, as of when."""
    read = getattr(request, "replica_read", None)
    return {"data_as_of": read.as_of if read is not None else None}

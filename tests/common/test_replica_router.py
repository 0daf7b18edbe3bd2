"""The replica router's rules, the choice of a replica and the page's "data as of", without a
replica (the real one: tests/deploy/test_read_replicas.py): each decision over given WAL positions,
clocks and models."""

from datetime import UTC, datetime, timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import AnonymousUser, Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.contrib.sessions.models import Session
from django.db import connection, transaction
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import resolve
from django.utils import translation

from common import replica_reads
from common.replica_reads import (
    CONSISTENCY_COOKIE,
    CONSISTENCY_HEADER,
    PrimaryPosition,
    ReplicaRead,
    ReplicaState,
    choose_replica,
    consistency_token,
    may_read_from_replica,
    replica_as_of,
    replica_serves,
    wal_position,
    written_position,
)
from common.replica_router import ReplicaRouter, read_alias, reading_from
from coupons.models import (
    ConflictCase,
    CouponOperation,
    IdempotencyRecord,
    ServiceClient,
    UserCoupon,
)
from refunds.models import Compensation, RefundCoupon
from timeline.models import StaffNote

router = ReplicaRouter()


@pytest.fixture
def replica_allowed():
    token = reading_from.set("replica_1")
    yield
    reading_from.reset(token)


def test_without_a_replica_request_every_read_goes_to_the_primary():
    assert router.db_for_read(UserCoupon) == "default"


def test_a_replica_request_reads_coupons_and_history_from_the_replica(replica_allowed):
    assert router.db_for_read(UserCoupon) == "replica_1"
    assert router.db_for_read(CouponOperation) == "replica_1"


def test_who_may_act_and_idempotency_claims_are_read_from_the_primary(replica_allowed):
    for model in (User, ServiceClient, IdempotencyRecord):
        assert router.db_for_read(model) == "default", model


# A replica's copy of these would be wrong, not old: a session signed out on the primary still
# signed in, a lockout lifted, a revoked permission or key still honoured, a command claimed
# twice.
@pytest.mark.parametrize("model", [
    Session, User, Group, Permission, AccessAttempt, ContentType, LogEntry, ServiceClient,
    IdempotencyRecord,
])
def test_sign_ins_permissions_and_claims_never_come_from_a_replica(model):
    assert read_alias(model, "replica_1", in_transaction=False) == "default"


@pytest.mark.parametrize("model", [
    UserCoupon, CouponOperation, ConflictCase, RefundCoupon, Compensation, StaffNote,
])
def test_what_pages_show_may_come_from_a_replica_outside_a_transaction(model):
    assert read_alias(model, "replica_1", in_transaction=False) == "replica_1"
    assert read_alias(model, "replica_1", in_transaction=True) == "default"


# --- which replica answers: WAL positions and clocks as given ----------------------------------

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def replica(replayed="0/3000000", lag_seconds=0.0, in_recovery=True) -> ReplicaState:
    """A replica whose last replayed commit is `lag_seconds` old."""
    return ReplicaState(in_recovery=in_recovery, replayed=replayed,
                        last_commit=NOW - timedelta(seconds=lag_seconds), now=NOW)


def serves(state: ReplicaState, written=None, primary=None, max_lag_seconds=5) -> bool:
    return replica_serves(state, replica_as_of(state, primary), written, max_lag_seconds)


@pytest.mark.parametrize(("replayed", "written", "answer"), [
    ("0/3000000", None, True),  # no recent write: any replica within the bound
    ("0/3000000", "0/3000000", True),  # replayed exactly up to the write
    ("0/3000000", "0/2FFFFFF", True),
    ("0/3000000", "0/3000001", False),  # one byte short of the caller's write
    ("0/FFFFFFFF", "1/0", False),  # the high half counts first (as text it would not)
    ("1/0", "0/FFFFFFFF", True),
    ("A/0", "9/FFFFFFFF", True),
    (None, "0/1", False),  # nothing replayed yet
])
def test_a_caller_who_just_wrote_reads_only_a_replica_that_has_replayed_the_write(
        replayed, written, answer):
    assert serves(replica(replayed), written) is answer


@pytest.mark.parametrize(("lag_seconds", "answer"), [
    (0, True), (4.999, True), (5, True), (5.001, False), (3600, False),
])
def test_a_replica_further_behind_than_the_bound_is_passed_over(lag_seconds, answer):
    assert serves(replica(lag_seconds=lag_seconds)) is answer


def test_a_promoted_copy_or_one_with_nothing_replayed_is_passed_over():
    promoted = replica(in_recovery=False)
    empty = ReplicaState(in_recovery=True, replayed=None, last_commit=None, now=NOW)

    assert serves(promoted) is False
    assert serves(empty) is False


def test_a_replica_that_has_replayed_the_primarys_position_is_as_of_when_it_was_read():
    """An idle primary: the last commit is an hour old, and the replica has all of it."""
    idle = replica("0/3000000", lag_seconds=3600)
    primary = PrimaryPosition(at=NOW - timedelta(seconds=0.01), reached="0/3000000")

    assert replica_as_of(idle, primary) == primary.at
    assert serves(idle, primary=primary) is True


def test_a_stalled_stream_shows_its_real_age_however_caught_up_the_replica_thinks_it_is():
    """The primary's WAL sender stopped, the connection up: the replica has replayed all it
    received (its own view: caught up) but not the primary's last 13 seconds. Its data is as of
    its last replayed commit, and past the bound the primary answers."""
    stalled = replica("0/3000000", lag_seconds=13)
    primary = PrimaryPosition(at=NOW, reached="0/3000400")

    assert replica_as_of(stalled, primary) == NOW - timedelta(seconds=13)
    assert serves(stalled, primary=primary) is False
    assert serves(stalled, primary=primary, max_lag_seconds=3600) is True


def test_without_the_primarys_position_a_replica_is_as_of_its_last_replayed_commit():
    assert replica_as_of(replica(lag_seconds=2), None) == NOW - timedelta(seconds=2)
    assert replica_as_of(ReplicaState(True, None, None, NOW), None) is None


@pytest.mark.django_db
def test_wal_positions_order_as_postgresql_orders_them():
    positions = ["0/0", "0/1", "0/FFFFFFFF", "1/0", "16/B374D848", "FF/0", "FFFFFFFF/FFFFFFFF"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT p, p::pg_lsn - '0/0'::pg_lsn FROM unnest(%s::text[]) AS p",
                       [positions])
        bytes_from_start = dict(cursor.fetchall())

    assert {p: wal_position(p) for p in positions} == {p: int(n) for p, n in
                                                        bytes_from_start.items()}


def test_reads_go_to_the_one_replica_that_has_the_callers_write_and_keeps_up(
        settings, monkeypatch):
    settings.DATABASE_REPLICA_ALIASES = ["behind_the_write", "lagging", "fresh", "promoted"]
    states = {"behind_the_write": replica("0/1000000"),
              "lagging": replica("0/9000000", lag_seconds=60),
              "fresh": replica("0/5000000", lag_seconds=1),
              "promoted": replica("0/9000000", in_recovery=False)}
    monkeypatch.setattr(replica_reads, "replica_state", states.get)
    # The primary's WAL is past every replica's: each is as of its last replayed commit.
    monkeypatch.setattr(replica_reads, "primary_position",
                        lambda: PrimaryPosition(at=NOW, reached="F/0"))
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 5

    assert choose_replica("0/4000000") == ReplicaRead("fresh", NOW - timedelta(seconds=1))
    assert choose_replica("0/6000000") is None  # only a lagging or promoted one has it


@pytest.mark.django_db(transaction=True)
def test_inside_a_transaction_reads_go_where_the_writes_go(replica_allowed):
    outside = router.db_for_read(UserCoupon)
    with transaction.atomic():
        inside = router.db_for_read(UserCoupon)

    assert (outside, inside) == ("replica_1", "default")


def test_writes_and_migrations_only_ever_go_to_the_primary(replica_allowed):
    assert router.db_for_write(UserCoupon) == "default"
    assert router.allow_migrate("replica_1", "coupons") is False
    assert router.allow_migrate("default", "coupons") is True


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("GET", "/api/v1/coupons/1", True),
    ("GET", "/coupons/1/", True),
    ("GET", "/search/", True),
    ("HEAD", "/", True),
    ("POST", "/api/v1/coupons/1/lock", False),
    ("POST", "/cases/1/resolve", False),
    ("GET", "/login/", False),
    ("GET", "/policies/new/", False),
    ("GET", "/policies/1/versions/2/edit/", False),
    ("GET", "/admin/", False),
])
def test_only_reads_of_console_pages_and_the_api_may_use_a_replica(method, path, allowed):
    request = RequestFactory().generic(method, path)
    request.resolver_match = resolve(path)

    assert may_read_from_replica(request) is allowed


def test_a_write_answers_its_position_signed_and_the_callers_next_read_waits_for_it(settings):
    settings.DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS = 60
    token = consistency_token("16/B374D848")
    api_client = RequestFactory().get("/", **{"HTTP_" + CONSISTENCY_HEADER.upper().replace(
        "-", "_"): token})
    browser = RequestFactory().get("/", HTTP_COOKIE=f"{CONSISTENCY_COOKIE}={token}")

    assert written_position(api_client) == written_position(browser) == "16/B374D848"
    assert written_position(RequestFactory().get("/")) is None


def test_the_newest_of_the_positions_a_caller_sends_back_counts(settings):
    settings.DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS = 60
    both = RequestFactory().get(
        "/", HTTP_COOKIE=f"{CONSISTENCY_COOKIE}={consistency_token('1/0')}",
        HTTP_X_CONSISTENCY_TOKEN=consistency_token("0/FFFFFFFF"))

    assert written_position(both) == "1/0"


@pytest.mark.parametrize("sent", [
    "16/B374D848",  # unsigned: a caller cannot push every read to the primary at will
    None,  # signed, then altered (below)
    "",
])
def test_an_unsigned_altered_or_empty_position_is_no_write_to_wait_for(settings, sent):
    settings.DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS = 60
    if sent is None:
        sent = consistency_token("0/1").replace("0/1", "FF/0", 1)
    request = RequestFactory().get("/", HTTP_X_CONSISTENCY_TOKEN=sent)

    assert written_position(request) is None


def test_a_position_older_than_the_read_your_writes_window_is_no_write_to_wait_for(
        settings, monkeypatch):
    settings.DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS = 60
    token = consistency_token("0/1")
    request = RequestFactory().get("/", HTTP_X_CONSISTENCY_TOKEN=token)
    assert written_position(request) == "0/1"
    # The signature's own time is checked against the window: 61 s later it is expired.
    real_time = replica_reads.signing.time.time
    monkeypatch.setattr(replica_reads.signing.time, "time", lambda: real_time() + 61)

    assert written_position(request) is None


@pytest.mark.parametrize(("language", "sentence"), [
    ("en", "Data as of"), ("zh-hans", "数据截至"),
])
def test_a_page_read_from_a_replica_says_as_of_when_in_the_readers_language(language, sentence):
    moment = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    request = RequestFactory().get("/")
    request.user = AnonymousUser()
    plain = render_to_string("timeline/base.html", request=request)
    request.replica_read = ReplicaRead("replica_1", moment)
    with translation.override(language):
        marked = render_to_string("timeline/base.html", request=request)

    assert sentence in marked and sentence not in plain
    assert 'datetime="2026-12-01T12:00:00+00:00"' in marked

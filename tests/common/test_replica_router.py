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
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import resolve
from django.utils import translation

from common import replica_reads
from common.replica_reads import (
    ReplicaRead,
    ReplicaState,
    caller_key,
    choose_replica,
    may_read_from_replica,
    replica_serves,
    wal_position,
)
from common.replica_router import ReplicaRouter, read_alias, reading_from
from console.models import StaffNote
from coupons.models import (
    ConflictCase,
    CouponOperation,
    IdempotencyRecord,
    ServiceClient,
    UserCoupon,
)
from refunds.models import Compensation, RefundCoupon

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
    return ReplicaState(in_recovery=in_recovery, replayed=replayed,
                        as_of=NOW - timedelta(seconds=lag_seconds), now=NOW)


@pytest.mark.parametrize(("replayed", "written", "serves"), [
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
        replayed, written, serves):
    assert replica_serves(replica(replayed), written, max_lag_seconds=5) is serves


@pytest.mark.parametrize(("lag_seconds", "serves"), [
    (0, True), (4.999, True), (5, True), (5.001, False), (3600, False),
])
def test_a_replica_further_behind_than_the_bound_is_passed_over(lag_seconds, serves):
    assert replica_serves(replica(lag_seconds=lag_seconds), None, max_lag_seconds=5) is serves


def test_a_promoted_copy_or_one_with_nothing_replayed_is_passed_over():
    promoted = replica(in_recovery=False)
    empty = ReplicaState(in_recovery=True, replayed=None, as_of=None, now=NOW)

    assert replica_serves(promoted, None, max_lag_seconds=5) is False
    assert replica_serves(empty, None, max_lag_seconds=5) is False


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


def test_read_your_writes_follows_the_session_a_sign_in_just_set():
    request = RequestFactory().post("/login/", HTTP_COOKIE="sessionid=before")
    response = HttpResponse()
    response.set_cookie("sessionid", "after")
    next_request = RequestFactory().get("/", HTTP_COOKIE="sessionid=after")

    assert caller_key(request, response) == caller_key(next_request)
    assert caller_key(request, response) != caller_key(request)


def test_read_your_writes_follows_an_api_key_and_keeps_it_hashed():
    one = RequestFactory().get("/", HTTP_AUTHORIZATION="Token secret-one")
    other = RequestFactory().get("/", HTTP_AUTHORIZATION="Token secret-two")

    assert caller_key(one) != caller_key(other)
    assert "secret-one" not in caller_key(one)
    assert caller_key(RequestFactory().get("/")) is None


@pytest.mark.parametrize(("language", "sentence"), [
    ("en", "Data as of"), ("zh-hans", "数据截至"),
])
def test_a_page_read_from_a_replica_says_as_of_when_in_the_readers_language(language, sentence):
    moment = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    request = RequestFactory().get("/")
    request.user = AnonymousUser()
    plain = render_to_string("console/base.html", request=request)
    request.replica_read = ReplicaRead("replica_1", moment)
    with translation.override(language):
        marked = render_to_string("console/base.html", request=request)

    assert sentence in marked and sentence not in plain
    assert 'datetime="2026-12-01T12:00:00+00:00"' in marked

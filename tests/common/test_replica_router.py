"""The replica router's rules and the page's "data as of", without a replica (the real one:
tests/deploy/test_read_replicas.py)."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import resolve
from django.utils import translation

from common.replica_reads import ReplicaRead, caller_key, may_read_from_replica
from common.replica_router import ReplicaRouter, reading_from
from coupons.models import CouponOperation, IdempotencyRecord, ServiceClient, UserCoupon

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

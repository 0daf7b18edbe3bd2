import itertools
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection
from rest_framework.test import APIClient

from common import embedded_postgres
from coupons.capabilities import CLIENT_GRANTS
from coupons.clock import FrozenClock, use_clock
from coupons.evidence.replay import coupon_check
from coupons.models import CouponStatus, FactType, UserCoupon
from coupons.services import (
    CommandContext,
    LeaseProof,
    coupon_issue,
    coupon_lock,
    service_client_create,
    template_create,
)
from coupons.write.tokens import lease_token
from tests.app_role import app_role_session, owner_role  # noqa: F401 (autouse fixtures)

START = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
# Suites that start processes beside the test process (database clusters, servers, a browser,
# node tools): marked `system`, so `bin/test` runs the fast suite and `bin/test --all` adds them.
SYSTEM_FOLDERS = {"deploy", "browser", "contract"}
# `create_service_client NAME --allow all --facts all`: for tests not about permissions.
ALL_GRANTS = {"capabilities": CLIENT_GRANTS.values(), "fact_types": FactType.values}


def pytest_collection_modifyitems(items):
    tests = Path(__file__).parent
    for item in items:
        if item.path.relative_to(tests).parts[0] in SYSTEM_FOLDERS:
            item.add_marker(pytest.mark.system)


STOP_TEST_CLUSTER = pytest.StashKey[bool]()


def pytest_configure(config):
    """Without DATABASE_URL the suite runs on the embedded `test` cluster (its first connection
    starts it): a run that found it stopped (the xdist controller, not a worker) stops it at the
    end; one found running stays, and so does bin/mutation's `mutation` cluster."""
    from django.conf import settings

    config.stash[STOP_TEST_CLUSTER] = (
        settings.DATABASES["default"].get("EMBEDDED_CLUSTER") == "test"
        and not hasattr(config, "workerinput") and not embedded_postgres.running("test"))


def pytest_unconfigure(config):
    if config.stash.get(STOP_TEST_CLUSTER, False):
        from django.db import connections

        connections.close_all()
        embedded_postgres.stop("test")


@pytest.fixture
def clock():
    with use_clock(FrozenClock(START)) as frozen:
        yield frozen


def unreplayable(coupons) -> dict[int, dict]:
    """The coupons whose per-coupon check (docs/design.md) fails, with the violations it found."""
    return {
        coupon.pk: report.violations
        for coupon in coupons
        if not (report := coupon_check(coupon, full=True)).ok
    }


def assert_check_is_alive() -> None:
    """A coupon row with no history at all must fail the check, or every check below is blind.

    The phantom is never saved: the check only reads its (empty) ledger, locks and redemptions.
    """
    phantom = UserCoupon(pk=0, status=CouponStatus.AVAILABLE, state_version=1)
    assert 7 in unreplayable([phantom]).get(0, {}), (
        "coupon_check passes a coupon that has no ledger: the after-test check cannot fail"
    )


BROKEN_ON_PURPOSE = pytest.StashKey[set]()


@pytest.fixture
def broken_on_purpose(request) -> set[int]:
    """Ids of coupons a test breaks deliberately (tests/safety). The after-test check requires
    each of them to fail the check, and holds every other coupon to it as usual."""
    return request.node.stash[BROKEN_ON_PURPOSE]


@pytest.fixture(autouse=True)
def own_checkpoint_dir(tmp_path_factory, settings, monkeypatch):
    """The signer trusts only its own files, so each test signs into a directory of its own: a
    chain an earlier test of the same process signed would be this one's (over a flushed
    database). Subprocesses the test starts get it too."""
    directory = tmp_path_factory.mktemp("checkpoints")
    settings.LEDGER_CHECKPOINT_DIR = str(directory)
    monkeypatch.setenv("LEDGER_CHECKPOINT_DIR", str(directory))


@pytest.fixture(autouse=True)
def ledger_replays_to_every_coupon(request):
    """After every test that touched the database: the invariants (docs/design.md) hold for every
    coupon (inv. 7)."""
    # Kept here, not in broken_on_purpose, which is torn down before this fixture's check.
    on_purpose = request.node.stash[BROKEN_ON_PURPOSE] = set()
    yield
    if request.node.get_closest_marker("django_db") is None:
        return
    if connection.needs_rollback or connection.connection is None:
        return
    assert_check_is_alive()
    failures = unreplayable(UserCoupon.objects.all())
    assert on_purpose <= set(failures), (
        f"coupons broken on purpose that pass the check: {on_purpose - set(failures)}"
    )
    failures = {pk: found for pk, found in failures.items() if pk not in on_purpose}
    assert not failures, f"ledger does not replay to the coupon rows: {failures}"


@pytest.fixture
def ctx():
    return CommandContext(actor="test")


@pytest.fixture
def template(clock):
    return template_create(
        code="off30", name="30 off 200", kind="AMOUNT_OFF", face_value=Decimal("30.00"),
        min_order_amount=Decimal("200.00"), valid_days=30,
    )


@pytest.fixture
def coupon(template, ctx):
    return coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon


def lock(coupon, ctx, order_id="order-A", amount="300.00", **kwargs):
    """Lock through the service; answers the result and the LeaseProof its holder would use."""
    result = coupon_lock(
        coupon_id=coupon.pk, order_id=order_id, user_id=coupon.user_id,
        order_amount=Decimal(amount), ctx=ctx, **kwargs,
    )
    proof = LeaseProof.from_token(
        order_id=order_id, lock_token=lease_token(result.lock.pk),
        expected_version=result.state_version,
    )
    return result, proof


@pytest.fixture
def service_client(db, clock):
    client, key = service_client_create(name="order-service", **ALL_GRANTS)
    return client, key


@pytest.fixture
def api(service_client):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {service_client[1]}")
    return client


_message_ids = itertools.count(1)


@pytest.fixture
def send(api, clock):
    """POST a fact to the inbox; answers the response. A message id is made unless given;
    occurred_at is now unless given (a redelivery must repeat the first one's)."""

    def send(fact_type, message_id=None, expect=202, occurred_at=None, **payload):
        body = {
            "message_id": message_id or f"m-{next(_message_ids)}",
            "type": fact_type,
            "occurred_at": (occurred_at or clock.now()).isoformat(),
            "payload": payload,
        }
        response = api.post("/api/v1/events", body, format="json")
        assert response.status_code == expect, response.json()
        return response.json()

    return send

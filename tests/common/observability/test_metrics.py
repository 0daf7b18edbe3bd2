"""/metrics: who may read it, the HTTP and database basics, and the coupon service's own."""

import re

import pytest
from prometheus_client import REGISTRY

from coupons.errors import TokenMismatch
from coupons.services import coupon_issue, coupon_redeem
from coupons.write.context import LeaseProof
from operations.relay import Relay
from operations.scanners import scan_presale_expiry
from tests.conftest import lock
from tests.coupons.events.test_presale import deposit, issue, presale_template

pytestmark = pytest.mark.django_db

TOKEN = "m" * 40


@pytest.fixture
def metrics_token(settings):
    settings.METRICS_TOKEN = TOKEN


@pytest.fixture
def scrape(client, metrics_token):
    def scrape() -> dict[str, float]:
        response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/plain")
        samples = {}
        for line in response.content.decode().splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                samples[name] = float(value)
        return samples

    return scrape


def test_metrics_do_not_exist_without_a_configured_token(client, settings):
    settings.METRICS_TOKEN = ""

    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Token {TOKEN}", TOKEN,
                                           f"Bearer {TOKEN}x"])
def test_metrics_refuse_a_caller_without_the_token(client, metrics_token, authorization):
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}

    response = client.get("/metrics", **headers)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert b"coupons_" not in response.content


def test_metrics_are_read_only(client, metrics_token):
    assert client.post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 405


def test_http_and_database_basics_are_exported(scrape, client):
    client.get("/healthz")
    samples = scrape()

    assert any(name.startswith("django_http_requests_total_by_method_total")
               for name in samples)
    assert any(name.startswith("django_db_execute_total") for name in samples)


def test_state_gauges_read_the_database(scrape, clock, template, ctx, send):
    assert scrape()["coupons_outbox_unpublished"] == 0
    coupons = [coupon_issue(template_id=template.pk, user_id=f"u{n}", ctx=ctx).coupon
               for n in range(3)]
    lock(coupons[0], ctx, order_id="A", lease_seconds=60)
    lock(coupons[1], ctx, order_id="B", lease_seconds=60)
    send("OrderClosed", order_id="B")
    send("PaymentSucceeded", order_id="B", payment_id="P-late")  # opens a case
    clock.advance(seconds=90)

    samples = scrape()

    assert samples["coupons_outbox_unpublished"] == 3 + 2 + 1  # issues, locks, the release
    assert samples["coupons_outbox_oldest_unpublished_age_seconds"] == 90
    assert samples["coupons_leases_expired_unreleased"] == 1  # A's; B's was released
    assert samples["coupons_conflict_cases_open"] == 1


def test_expiry_warnings_are_counted(scrape, clock, send):
    deposit(send, issue(presale_template("presale", "STRICT")))
    assert scrape()["coupons_expiry_warnings_total"] == 0

    scan_presale_expiry()

    samples = scrape()
    assert samples["coupons_expiry_warnings_total"] == 1
    assert samples["coupons_expiry_warnings_open"] == 1
    send("OrderClosed", order_id="PS-1")
    assert scrape()["coupons_expiry_warnings_open"] == 0


def sample(name, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_commands_and_refusals_are_counted_when_they_commit(
    template, ctx, django_capture_on_commit_callbacks
):
    locks = sample("coupons_commands_total", command="LOCK", outcome="ok")
    refused = sample("coupons_commands_total", command="REDEEM", outcome="refused")
    by_code = sample("coupons_refusals_total", command="REDEEM", code="TOKEN_MISMATCH")
    with django_capture_on_commit_callbacks(execute=True):
        coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
        lock(coupon, ctx)
        forged = LeaseProof(order_id="order-A", token_hash="0" * 64, expected_version=2)
        with pytest.raises(TokenMismatch):
            coupon_redeem(coupon_id=coupon.pk, lease=forged, payment_id="P", ctx=ctx)

    assert sample("coupons_commands_total", command="LOCK", outcome="ok") == locks + 1
    assert sample("coupons_commands_total", command="REDEEM", outcome="refused") == refused + 1
    assert sample("coupons_refusals_total", command="REDEEM",
                  code="TOKEN_MISMATCH") == by_code + 1


def test_a_command_rolled_back_is_not_counted(template, ctx, django_capture_on_commit_callbacks):
    before = sample("coupons_commands_total", command="ISSUE", outcome="ok")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx)
    # Counted only by the commit's callback: no commit, no count.
    assert sample("coupons_commands_total", command="ISSUE", outcome="ok") == before
    assert len(callbacks) == 1


def test_relay_broker_failures_are_counted(template, ctx):
    before = sample("coupons_relay_publish_failures_total", stage="connect")
    coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx)

    result = Relay(url="amqp://guest:guest@127.0.0.1:1/%2F").run_batch()

    assert result.error is not None
    assert sample("coupons_relay_publish_failures_total", stage="connect") == before + 1


def test_no_metric_line_carries_a_secret(scrape, service_client, api, template, ctx):
    api.get("/api/v1/coupons")
    page = " ".join(scrape())
    assert service_client[1] not in page
    assert not re.search(r"Token|Bearer", page)


def test_open_reconciliation_findings_are_counted_by_severity(scrape, clock, template, ctx):
    from tests.operations.reconciliation.conftest import closed_order_still_locked

    closed_order_still_locked(template, ctx)

    samples = scrape()

    assert samples['coupons_reconciliation_findings_open{severity="P2"}'] == 1
    assert samples['coupons_reconciliation_findings_open{severity="P0"}'] == 0

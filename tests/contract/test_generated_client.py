"""A client generated from the schema (openapi-python-client) tells the incident story against
a live server, with its own models only: no raw dicts in, no raw JSON out.

Order A locks the coupon, its payment callback is late, the order-close job releases the
coupon, order B locks it; A's late redeem is refused (and its retry answered from the stored
refusal), A's late PaymentSucceeded fact opens a conflict case, B's redeem makes it USED. If the
schema says something the server does not do, the generated code fails to build a request or to
parse an answer here.
"""

import importlib
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiYamlRenderer

from coupons.services import service_client_create
from tests.conftest import ALL_GRANTS

pytestmark = pytest.mark.django_db(transaction=True)

PACKAGE = "coupon_console_client"


@pytest.fixture(scope="module")
def generated(tmp_path_factory, django_db_blocker):
    """The client package, generated into a temporary folder and imported."""
    folder = tmp_path_factory.mktemp("generated")
    with django_db_blocker.unblock():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    (folder / "openapi.yaml").write_bytes(OpenApiYamlRenderer().render(schema, {}))
    # No post hooks: the generator would run ruff from PATH over the output.
    (folder / "config.yaml").write_text("post_hooks: []\n")
    built = subprocess.run(
        [str(Path(sys.executable).with_name("openapi-python-client")), "generate",
         "--path", "openapi.yaml", "--config", "config.yaml", "--meta", "none",
         "--output-path", PACKAGE],
        cwd=folder, capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stdout + built.stderr
    assert "Warning" not in built.stdout, built.stdout  # every schema part became code
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name.startswith(PACKAGE)]:
            del sys.modules[name]


def test_a_generated_client_tells_the_incident_story(generated, live_server, clock):
    from coupon_console_client import AuthenticatedClient
    from coupon_console_client.api.coupons import (
        coupons_check_retrieve,
        coupons_create,
        coupons_lock_create,
        coupons_operations_list,
        coupons_redeem_create,
        coupons_rejections_list,
        coupons_release_create,
        coupons_retrieve,
    )
    from coupon_console_client.api.events import events_create
    from coupon_console_client.api.templates import templates_create
    from coupon_console_client.models import (
        CaseOutcome,
        CaseOutcomeActionEnum,
        CouponKindEnum,
        CouponStatusEnum,
        ErrorOutput,
        InboxStatusEnum,
        IssueInputRequest,
        LockInputRequest,
        LockOutput,
        PaymentPayloadRequest,
        PaymentSucceededEventRequest,
        PaymentSucceededEventTypeEnum,
        RedeemInputRequest,
        ReleaseInputRequest,
        TemplateInputRequest,
    )

    _, key = service_client_create(name="order-service", **ALL_GRANTS)
    api = AuthenticatedClient(base_url=live_server.url, token=key, prefix="Token")

    template = templates_create.sync(client=api, idempotency_key="t-1", body=TemplateInputRequest(
        code="off30", name="30 off 200", kind=CouponKindEnum.AMOUNT_OFF, face_value="30.00",
        min_order_amount="200.00", valid_days=30))
    coupon = coupons_create.sync(client=api, idempotency_key="issue-1",
                                 body=IssueInputRequest(template_id=template.id, user_id="u1"))
    assert (coupon.status, coupon.state_version) == (CouponStatusEnum.AVAILABLE, 1)

    def lock(order_id: str) -> LockOutput:
        return coupons_lock_create.sync(
            coupon.id, client=api, idempotency_key=f"lock-{order_id}",
            body=LockInputRequest(order_id=order_id, user_id="u1", order_amount="300.00",
                                  lease_seconds=900))

    def redeem(lease: LockOutput, payment_id: str, key: str):
        return coupons_redeem_create.sync_detailed(
            coupon.id, client=api, idempotency_key=key, body=RedeemInputRequest(
                order_id=lease.order_id, lock_token=lease.lock_token,
                expected_version=lease.state_version, payment_id=payment_id))

    lease_a = lock("order-A")
    clock.advance(minutes=5)  # A pays; its callback is stuck in a queue
    released = coupons_release_create.sync(
        coupon.id, client=api, idempotency_key="close-A", body=ReleaseInputRequest(
            order_id="order-A", lock_token=lease_a.lock_token,
            expected_version=lease_a.state_version, reason="order closed"))
    assert (released.status, released.state_version) == (CouponStatusEnum.AVAILABLE, 3)
    lease_b = lock("order-B")

    late = redeem(lease_a, "pay-A", "pay-A-callback")
    retry = redeem(lease_a, "pay-A", "pay-A-callback")

    assert late.status_code == 409 and isinstance(late.parsed, ErrorOutput)
    assert late.parsed.error.code in {"TOKEN_MISMATCH", "VERSION_CONFLICT"}
    assert retry.parsed == late.parsed and retry.headers["Idempotent-Replayed"] == "true"
    [refusal] = coupons_rejections_list.sync(coupon.id, client=api).results
    assert (refusal.op_type, refusal.order_id) == ("REDEEM", "order-A")

    fact = events_create.sync(client=api, body=PaymentSucceededEventRequest(
        message_id="pay-A-late", type_=PaymentSucceededEventTypeEnum.PAYMENTSUCCEEDED,
        occurred_at=clock.now() - timedelta(minutes=4),
        payload=PaymentPayloadRequest(order_id="order-A", payment_id="pay-A")))
    assert fact.status == InboxStatusEnum.PROCESSED
    # The union's branch tells the sender what the case answer carries, with no cast.
    assert isinstance(fact.outcome, CaseOutcome)
    assert fact.outcome.action == CaseOutcomeActionEnum.CASE_OPENED
    assert (fact.outcome.coupon_id, fact.outcome.error_code.value) == (coupon.id, "TOKEN_MISMATCH")
    assert fact.outcome.case_id > 0

    paid_b = redeem(lease_b, "pay-B", "pay-B-callback").parsed
    assert (paid_b.status, paid_b.state_version, paid_b.order_id) == (
        CouponStatusEnum.USED, 5, "order-B")
    assert coupons_retrieve.sync(coupon.id, client=api).status == CouponStatusEnum.USED
    ledger = coupons_operations_list.sync(coupon.id, client=api).results
    assert [(row.op_type, row.to_version, row.order_id) for row in ledger] == [
        ("ISSUE", 1, ""), ("LOCK", 2, "order-A"), ("RELEASE", 3, "order-A"),
        ("LOCK", 4, "order-B"), ("REDEEM", 5, "order-B")]
    assert coupons_check_retrieve.sync(coupon.id, client=api).ok


def test_a_generated_client_reads_what_a_later_minor_version_adds(generated):
    """Growable sets are open in answers: a new outcome action, error code, operation kind or
    timeline kind parses (the open branch), and a known one still parses to its own type."""
    from coupon_console_client.models import (
        CaseOutcome,
        ErrorOutput,
        EventOutput,
        OperationTypeEnum,
        OtherOutcome,
        TimelineEntryOutput,
    )

    later = EventOutput.from_dict({"message_id": "m-1", "status": "PROCESSED", "outcome": {
        "action": "COUPON_GIFTED", "repeated_fact": False, "gift_id": 3}})
    known = EventOutput.from_dict({"message_id": "m-2", "status": "PROCESSED", "outcome": {
        "action": "CASE_OPENED", "repeated_fact": False, "coupon_id": 1, "case_id": 2,
        "recommendation": "MANUAL_REVIEW", "error_code": "TOKEN_MISMATCH",
        "error_details": {"current_state": "LOCKED", "current_version": 4}}})
    error = ErrorOutput.from_dict({"error": {"code": "QUOTA_EXCEEDED", "message": "m",
                                             "details": {"current_version": 3}}})
    entry = TimelineEntryOutput.from_dict({"at": "2026-06-01T12:00:00Z", "kind": "gift",
                                           "id": 1, "title": "t", "details": {"to_version": 2}})

    assert isinstance(later.outcome, OtherOutcome)
    assert later.outcome.to_dict()["gift_id"] == 3
    assert isinstance(known.outcome, CaseOutcome) and known.outcome.case_id == 2
    assert error.error.code == "QUOTA_EXCEEDED"
    assert error.error.details.current_version == 3
    assert entry.kind == "gift" and entry.details.to_version == 2
    assert OperationTypeEnum("REDEEM").value == "REDEEM"

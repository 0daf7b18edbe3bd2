from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from coupons.models import CommandRejection, CouponOperation, CouponStatus, OutboxEvent
from coupons.services import CommandContext, coupon_issue, template_create, template_update
from tests.command_checks import events, ledger, refused
from tests.conftest import START

pytestmark = pytest.mark.django_db


def fixed_window_template(**terms):
    return template_create(
        code="summer", name="Summer 10 off", kind="AMOUNT_OFF", face_value=Decimal("10.00"),
        valid_from=datetime(2026, 7, 1, tzinfo=UTC), valid_until=datetime(2026, 9, 1, tzinfo=UTC),
        **terms,
    )


def test_issued_coupon_starts_available_at_version_one(template, ctx):
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    coupon.refresh_from_db()
    assert (coupon.status, coupon.state_version, coupon.user_id) == ("AVAILABLE", 1, "u1")
    assert coupon.issued_at == START
    assert coupon.locked_order_id is None and coupon.current_lock_id is None


def test_issue_writes_one_ledger_row_and_one_outbox_event(template, ctx):
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    assert ledger(coupon) == [("ISSUE", "", "AVAILABLE", 0, 1)]
    operation = CouponOperation.objects.get(coupon=coupon)
    assert operation.actor == "test"
    assert "off30 v1" in operation.reason
    event = OutboxEvent.objects.get(coupon=coupon)
    assert event.event_type == "CouponIssued"
    assert event.operation == operation
    assert event.published_at is None
    assert event.payload["coupon_id"] == coupon.pk
    assert event.payload["to_state"] == "AVAILABLE"
    assert event.payload["state_version"] == 1


def test_issue_records_the_idempotency_key_and_request_hash_in_the_ledger(template):
    ctx = CommandContext(actor="client:orders", idempotency_key="grant-1", request_hash="ab" * 32)
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    operation = CouponOperation.objects.get(coupon=coupon)
    assert (operation.actor, operation.idempotency_key, operation.request_hash) == (
        "client:orders", "grant-1", "ab" * 32,
    )


def test_valid_days_window_starts_at_issue(template, ctx, clock):
    clock.advance(days=3)
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    assert coupon.valid_from == START + timedelta(days=3)
    assert coupon.valid_until == START + timedelta(days=33)


def test_fixed_window_is_copied_from_the_template(clock, ctx):
    template = fixed_window_template()
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    assert coupon.valid_from == datetime(2026, 7, 1, tzinfo=UTC)
    assert coupon.valid_until == datetime(2026, 9, 1, tzinfo=UTC)


def test_coupon_is_issued_from_the_templates_current_version(template, ctx):
    template_update(template_id=template.pk, face_value=Decimal("40.00"))
    coupon = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    assert coupon.template_version.version == 2
    assert coupon.template_version.face_value == Decimal("40.00")


def test_each_issue_is_a_separate_coupon(template, ctx):
    first = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    second = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon

    assert first.pk != second.pk
    assert ledger(first) == ledger(second) == [("ISSUE", "", "AVAILABLE", 0, 1)]
    assert events(first) == events(second) == ["CouponIssued"]


def test_issue_from_an_unknown_template_is_refused_as_not_found(clock, ctx):
    with refused("NOT_FOUND", op_type="ISSUE") as error:
        coupon_issue(template_id=424242, user_id="u1", ctx=ctx)

    assert error.value.details == {"template_id": 424242}
    assert error.value.http_status == 404


def test_refused_issue_is_logged_with_actor_and_key(clock):
    ctx = CommandContext(actor="client:orders", idempotency_key="grant-9")
    with refused("NOT_FOUND", op_type="ISSUE"):
        coupon_issue(template_id=424242, user_id="u1", ctx=ctx)

    rejection = CommandRejection.objects.get()
    assert (rejection.actor, rejection.idempotency_key) == ("client:orders", "grant-9")
    assert rejection.created_at == START


def test_issued_coupon_payload_has_the_api_fields(template, ctx):
    payload = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).payload()

    assert payload == {
        "id": payload["id"],
        "user_id": "u1",
        "template_id": template.pk,
        "template_version": 1,
        "status": CouponStatus.AVAILABLE,
        "state_version": 1,
        "valid_from": "2026-06-01T12:00:00Z",
        "valid_until": "2026-07-01T12:00:00Z",
        "issued_at": "2026-06-01T12:00:00Z",
        "locked_order_id": None,
        "lock_expires_at": None,
    }

"""Checks the command tests share: what a refused command must leave alone, and the ledger."""

from contextlib import contextmanager

import pytest

from coupons.errors import CouponError
from coupons.models import (
    CommandRejection,
    CouponLock,
    CouponOperation,
    CouponTemplate,
    OrderCoupon,
    OutboxEvent,
    Redemption,
    UserCoupon,
)


def world() -> dict:
    """Every row a refused command must leave exactly as it found it."""
    return {
        "coupons": list(UserCoupon.objects.order_by("pk").values()),
        "operations": list(CouponOperation.objects.order_by("pk").values_list("pk", flat=True)),
        "outbox": list(OutboxEvent.objects.order_by("pk").values_list("pk", flat=True)),
        "locks": sorted(CouponLock.objects.values_list("pk", "status", "expires_at", "ended_at")),
        "order_coupons": list(OrderCoupon.objects.order_by("pk").values()),
        "redemptions": list(Redemption.objects.order_by("pk").values()),
        "templates": list(CouponTemplate.objects.order_by("pk").values_list("pk", "version")),
    }


def ledger(coupon) -> list[tuple]:
    """The coupon's ledger as (op, from state, to state, from version, to version), oldest first."""
    return list(
        CouponOperation.objects.filter(coupon=coupon).order_by("to_version").values_list(
            "op_type", "from_state", "to_state", "from_version", "to_version"
        )
    )


def events(coupon) -> list[str]:
    rows = OutboxEvent.objects.filter(coupon=coupon).order_by("pk")
    return list(rows.values_list("event_type", flat=True))


@contextmanager
def refused(code: str, *, op_type: str, coupon_id=None):
    """Expect the block to be refused with `code`, change nothing, and log one rejection."""
    before = world()
    logged_before = CommandRejection.objects.count()
    with pytest.raises(CouponError) as caught:
        yield caught
    assert caught.value.code == code, caught.value.as_body()
    assert world() == before
    assert CommandRejection.objects.count() == logged_before + 1
    rejection = CommandRejection.objects.latest("id")
    assert (rejection.op_type, rejection.error_code, rejection.coupon_id_ref) == (
        op_type, code, coupon_id,
    )
    assert rejection.details == caught.value.details


def lease_taken_over(coupon, ctx):
    """Order A locks and releases, then order B locks: A's proof is stale, B's is current."""
    from coupons.services import coupon_release
    from tests.conftest import lock

    _, proof_a = lock(coupon, ctx, order_id="order-A")
    coupon_release(coupon_id=coupon.pk, lease=proof_a, ctx=ctx, reason="order closed")
    _, proof_b = lock(coupon, ctx, order_id="order-B")
    return proof_a, proof_b

"""Coupon histories written through the real services: every command leaves one outbox row."""

from dataclasses import replace
from decimal import Decimal

from coupons.models import UserCoupon
from coupons.services import (
    coupon_expire,
    coupon_issue,
    coupon_redeem,
    coupon_release,
    coupon_renew,
    coupon_void,
)
from tests.conftest import lock


def version(coupon) -> int:
    return UserCoupon.objects.get(pk=coupon.pk).state_version


def every_command(template, ctx, clock) -> list[UserCoupon]:
    """Two coupons whose ledgers hold every lifecycle command's event.

    RETURN and REVERSE need a refund decision (refunds app); their rows go through the same relay.
    """
    first = coupon_issue(template_id=template.pk, user_id="u1", ctx=ctx).coupon
    _, proof = lock(first, ctx, order_id="order-A")
    renewed = coupon_renew(coupon_id=first.pk, lease=proof, ctx=ctx, lease_seconds=600)
    proof = replace(proof, expected_version=renewed.state_version)
    coupon_release(coupon_id=first.pk, lease=proof, ctx=ctx, reason="cart emptied")
    _, proof = lock(first, ctx, order_id="order-B")
    coupon_redeem(coupon_id=first.pk, lease=proof, payment_id="pay-1", ctx=ctx)
    coupon_void(coupon_id=first.pk, expected_version=version(first), reason="risk", ctx=ctx)

    second = coupon_issue(template_id=template.pk, user_id="u2", ctx=ctx).coupon
    clock.advance(days=40)
    coupon_expire(coupon_id=second.pk, expected_version=version(second), ctx=ctx)
    return [first, second]


def many_events(template, ctx, coupons: int) -> None:
    """Per coupon: ISSUE, LOCK, REDEEM (three events, versions 1-3)."""
    for n in range(coupons):
        coupon = coupon_issue(template_id=template.pk, user_id=f"u{n}", ctx=ctx).coupon
        _, proof = lock(coupon, ctx, order_id=f"order-{n}", amount=str(Decimal("300.00")))
        coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id=f"pay-{n}", ctx=ctx)

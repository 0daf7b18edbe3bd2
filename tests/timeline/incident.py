"""The late-payment incident (docs/design.md), told through the services on the test clock, for the
console's tests.

Order A locks the coupon; its payment callback is late, so the order-close handler releases the
coupon; order B locks it; A's late redeem is refused (TOKEN_MISMATCH); B pays and redeems.
"""

from decimal import Decimal

import pytest

from coupons.errors import TokenMismatch
from coupons.ledger_reasons import reason
from coupons.models import UserCoupon
from coupons.services import (
    CommandContext,
    LeaseProof,
    coupon_issue,
    coupon_lock,
    coupon_redeem,
    coupon_release,
)

ORDER_SERVICE = CommandContext(actor="client:order-service")
CLOSE_HANDLER = CommandContext(actor="system:coordinator")


def _lock(coupon, order_id, amount):
    locked = coupon_lock(coupon_id=coupon.pk, order_id=order_id, user_id=coupon.user_id,
                         order_amount=Decimal(amount), ctx=ORDER_SERVICE)
    return locked, LeaseProof.from_token(order_id=order_id, lock_token=locked.lock_token,
                                         expected_version=locked.state_version)


def incident_coupon(template, clock) -> UserCoupon:
    coupon = coupon_issue(template_id=template.pk, user_id="user_demo_1001",
                          ctx=CommandContext(actor="system:campaign-grant")).coupon
    clock.advance(minutes=5)
    locked_a, proof_a = _lock(coupon, "order_demo_A", "268.00")
    clock.advance(minutes=15)
    lease_a = LeaseProof.from_lock(locked_a.lock, expected_version=locked_a.state_version)
    coupon_release(coupon_id=coupon.pk, ctx=CLOSE_HANDLER, lease=lease_a,
                   reason=reason("order_ended", fact="OrderClosed", order="order_demo_A"))
    clock.advance(minutes=6)
    _, proof_b = _lock(coupon, "order_demo_B", "312.00")
    clock.advance(minutes=2)
    with pytest.raises(TokenMismatch):  # refused, and logged where support sees it
        coupon_redeem(coupon_id=coupon.pk, lease=proof_a, payment_id="payment_demo_PA",
                      ctx=ORDER_SERVICE)
    clock.advance(minutes=1)
    coupon_redeem(coupon_id=coupon.pk, lease=proof_b, payment_id="payment_demo_PB",
                  ctx=ORDER_SERVICE)
    return UserCoupon.objects.get(pk=coupon.pk)

"""A coupon with a long history, made through the services: the console's worst case.

Used by the page tests' query bound and by scripts/bench_console_pages.py.
"""

from decimal import Decimal

from coupons.errors import CouponError
from coupons.models import UserCoupon
from coupons.services import CommandContext, LeaseProof, coupon_lock, coupon_redeem, coupon_release
from refunds.services import refund_receive

CTX = CommandContext(actor="client:order-service")


def long_history(coupon, clock, *, ledger_rows: int = 1000, every: int = 10):
    """Order after order locks the coupon until its ledger has `ledger_rows` rows (ISSUE
    included). Most orders close (RELEASE); every `every`-th one pays and is refunded in full
    (REDEEM, then RETURN by the refund decision), and every `every`-th a stale order's late
    redeem is refused, so each source of the timeline has a long history too."""
    version, stale, n = coupon.state_version, None, 0
    while version < ledger_rows:
        order_id = f"order-{n}"
        proof = locked_by(coupon, order_id)
        version += 1
        clock.advance(seconds=1)
        if version == ledger_rows:
            break
        if stale is not None and n % every == 0:
            refused(coupon, stale)
        if n % every == every // 2 and version + 2 <= ledger_rows:
            coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id=f"pay-{n}", ctx=CTX)
            clock.advance(seconds=1)
            refund_receive(refund_id=f"refund-{n}", order_id=order_id, payment_id=f"pay-{n}",
                           refund_amount=Decimal("270.00"), refund_type="FULL", ctx=CTX)
            version += 2
        else:
            coupon_release(coupon_id=coupon.pk, lease=proof, ctx=CTX, reason="order closed")
            version += 1
        clock.advance(seconds=1)
        stale, n = proof, n + 1
    return UserCoupon.objects.get(pk=coupon.pk)


def locked_by(coupon, order_id: str) -> LeaseProof:
    locked = coupon_lock(coupon_id=coupon.pk, order_id=order_id, user_id=coupon.user_id,
                         order_amount=Decimal("300.00"), ctx=CTX)
    return LeaseProof.from_token(order_id=order_id, lock_token=locked.lock_token,
                                 expected_version=locked.state_version)


def refused(coupon, stale_proof) -> None:
    try:
        coupon_redeem(coupon_id=coupon.pk, lease=stale_proof, payment_id="late-payment", ctx=CTX)
    except CouponError:
        return  # refused and logged by the service: the entry we want in the timeline
    raise AssertionError("a stale lease's redeem was accepted")

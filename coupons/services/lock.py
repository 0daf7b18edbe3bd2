import uuid
from dataclasses import dataclass
from decimal import Decimal

from coupons import clock
from coupons.discounts import discount_for
from coupons.errors import CouponExpired, CouponNotYetValid, NotCouponOwner, ThresholdNotMet
from coupons.models import CouponLock, CouponStatus, OperationType, OrderCoupon
from coupons.write.context import command_transaction
from coupons.write.leases import lease_end
from coupons.write.payloads import iso, money
from coupons.write.refusals import refusals_recorded
from coupons.write.rows import lock_coupon_row
from coupons.write.tokens import current_lease_key_id, hash_token, lease_token
from coupons.write.transitions import Command, apply_transition, guard, is_past_validity


@dataclass(frozen=True)
class LockResult:
    lock: CouponLock
    state_version: int
    discount_amount: Decimal

    @property
    def lock_token(self) -> str:
        return lease_token(self.lock.pk, self.lock.token_key_id)

    def payload(self) -> dict:
        """The answer without the token: this is what an Idempotency-Key stores."""
        return {
            "coupon_id": self.lock.coupon_id,
            "lock_id": str(self.lock.pk),
            "order_id": self.lock.order_id,
            "state_version": self.state_version,
            "expires_at": iso(self.lock.expires_at),
            "status": CouponStatus.LOCKED,
            "discount_amount": money(self.discount_amount),
        }


def coupon_lock(
    *, coupon_id, order_id: str, user_id: str, order_amount: Decimal, ctx,
    quote_id: str = "", lease_seconds: int | None = None, lease_until=None,
    discount_cap: Decimal | None = None,
) -> LockResult:
    """Lease an AVAILABLE coupon to one order and freeze the order's discount.

    `discount_cap` is for a substitute: it stands in for the discount the order already has,
    so its evidence must not claim more.
    """
    with (
        refusals_recorded(OperationType.LOCK, ctx, coupon_id=coupon_id, order_id=order_id),
        command_transaction(ctx),
    ):
        now = clock.now()
        coupon = lock_coupon_row(coupon_id, ctx=ctx)
        guard(OperationType.LOCK, coupon)
        if coupon.user_id != user_id:
            raise NotCouponOwner()
        if coupon.valid_from is not None and now < coupon.valid_from:
            raise CouponNotYetValid(valid_from=iso(coupon.valid_from))
        if is_past_validity(coupon, now):
            raise CouponExpired(valid_until=iso(coupon.valid_until))
        terms = coupon.template_version
        if order_amount < terms.min_order_amount:
            raise ThresholdNotMet(
                min_order_amount=money(terms.min_order_amount), order_amount=money(order_amount)
            )
        discount = discount_for(terms, order_amount)
        if discount_cap is not None:
            discount = min(discount, discount_cap)
        expires_at = lease_end(now, lease_seconds=lease_seconds, lease_until=lease_until)

        lock_id, key_id = uuid.uuid4(), current_lease_key_id()
        token_hash = hash_token(lease_token(lock_id, key_id))
        version = coupon.state_version
        lock = CouponLock(
            id=lock_id, coupon=coupon, order_id=order_id, token_hash=token_hash,
            token_key_id=key_id,
            locked_at=now, expires_at=expires_at, acquired_version=version + 1,
            client_id=ctx.client_id,
        )
        order_link = OrderCoupon(
            lock=lock, coupon=coupon, order_id=order_id, quote_id=quote_id,
            order_amount=order_amount, discount_amount=discount,
            template_version=terms, created_at=now,
        )

        command = Command(
            OperationType.LOCK, ctx, now,
            changes={"current_lock": lock, "locked_order_id": order_id,
                     "lock_token_hash": token_hash, "lock_expires_at": expires_at},
            new_lease=(lock, order_link), ledger={"order_id": order_id, "lock": lock},
        )
        apply_transition(coupon, command, CouponStatus.LOCKED, version)
        return LockResult(lock=lock, state_version=coupon.state_version, discount_amount=discount)

from dataclasses import dataclass

from django.db import transaction

from coupons import clock
from coupons.models import CouponLock, CouponStatus, LockStatus, OperationType
from coupons.services.idempotency import idempotency_complete
from coupons.services.leases import check_lease
from coupons.services.refusals import refusals_recorded
from coupons.services.rows import lock_coupon_row
from coupons.services.transitions import UNBOUND, apply_transition, guard, is_past_validity


@dataclass(frozen=True)
class StateResult:
    coupon_id: int
    state_version: int
    status: str

    def payload(self) -> dict:
        return {"coupon_id": self.coupon_id, "state_version": self.state_version,
                "status": self.status}


def coupon_release(*, coupon_id, lease, ctx, reason: str = "") -> StateResult:
    """End the current lease: back to AVAILABLE, or EXPIRED when past valid_until."""
    with (
        refusals_recorded(OperationType.RELEASE, ctx, coupon_id=coupon_id,
                          order_id=lease.order_id),
        transaction.atomic(),
    ):
        now = clock.now()
        coupon = lock_coupon_row(coupon_id)
        guard(OperationType.RELEASE, coupon)
        check_lease(coupon, lease, ctx)
        end_lease(coupon, lease, ctx=ctx, now=now, reason=reason)
        result = StateResult(coupon.pk, coupon.state_version, coupon.status)
        idempotency_complete(ctx, status=ctx.success_status, body=result.payload())
        return result


def end_lease(coupon, lease, *, ctx, now, reason: str) -> None:
    """The RELEASE transition itself, for a caller holding the row lock and a checked lease."""
    lock = coupon.current_lock
    to_state = CouponStatus.EXPIRED if is_past_validity(coupon, now) else CouponStatus.AVAILABLE
    CouponLock.objects.filter(pk=lock.pk).update(status=LockStatus.RELEASED, ended_at=now)
    apply_transition(
        coupon=coupon, op_type=OperationType.RELEASE, to_state=to_state,
        expected_version=lease.expected_version, ctx=ctx, now=now,
        owner=(lease.order_id, lease.token_hash), changes=UNBOUND,
        order_id=lease.order_id, lock=lock, reason=reason[:500],
    )

from dataclasses import dataclass

from coupons import clock
from coupons.ledger_reasons import reason_fields
from coupons.models import CouponStatus, LockStatus, OperationType
from coupons.write.context import command_transaction
from coupons.write.leases import check_lease
from coupons.write.refusals import refusals_recorded
from coupons.write.rows import lock_coupon_row
from coupons.write.transitions import UNBOUND, Command, apply_transition, guard, is_past_validity


@dataclass(frozen=True)
class StateResult:
    coupon_id: int
    state_version: int
    status: str

    @classmethod
    def of(cls, coupon) -> "StateResult":
        return cls(coupon.pk, coupon.state_version, coupon.status)

    def payload(self) -> dict:
        return {"coupon_id": self.coupon_id, "state_version": self.state_version,
                "status": self.status}


def coupon_release(*, coupon_id, lease, ctx, reason: str = "") -> StateResult:
    """End the current lease: back to AVAILABLE, or EXPIRED when past valid_until."""
    with (
        refusals_recorded(OperationType.RELEASE, ctx, coupon_id=coupon_id,
                          order_id=lease.order_id),
        command_transaction(ctx),
    ):
        now = clock.now()
        coupon = lock_coupon_row(coupon_id, ctx=ctx)
        guard(OperationType.RELEASE, coupon)
        check_lease(coupon, lease, ctx)
        end_lease(coupon, lease, ctx=ctx, now=now, reason=reason)
        return StateResult.of(coupon)


def end_lease(coupon, lease, *, ctx, now, reason: str) -> None:
    """The RELEASE transition itself, for a caller holding the row lock and a checked lease."""
    to_state = CouponStatus.EXPIRED if is_past_validity(coupon, now) else CouponStatus.AVAILABLE
    command = Command(
        OperationType.RELEASE, ctx, now, owner=(lease.order_id, lease.token_hash),
        changes=UNBOUND, lease_changes={"status": LockStatus.RELEASED, "ended_at": now},
        ledger={"order_id": lease.order_id, "lock": coupon.current_lock,
                **reason_fields(reason)},
    )
    apply_transition(coupon, command, to_state, lease.expected_version)

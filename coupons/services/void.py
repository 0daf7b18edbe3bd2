from coupons import clock
from coupons.errors import VersionConflict
from coupons.ledger_reasons import reason_fields
from coupons.models import CouponStatus, LockStatus, OperationType
from coupons.services.release import StateResult
from coupons.write.context import command_transaction
from coupons.write.refusals import refusals_recorded
from coupons.write.rows import lock_coupon_row
from coupons.write.transitions import UNBOUND, Command, apply_transition, guard


def coupon_void(
    *, coupon_id, expected_version: int, reason: str, ctx, refund_id: str = ""
) -> StateResult:
    """Take a coupon out of use for good (campaign closed, risk, refund decision).

    A lease it had ends as RELEASED; a redemption it had stays: voiding is not a refund.
    `refund_id` names the refund whose decision voids it, in the ledger row.
    """
    with (
        refusals_recorded(OperationType.VOID, ctx, coupon_id=coupon_id),
        command_transaction(ctx),
    ):
        now = clock.now()
        coupon = lock_coupon_row(coupon_id, ctx=ctx)
        guard(OperationType.VOID, coupon)
        if coupon.state_version != expected_version:
            raise VersionConflict(coupon=coupon, expected_version=expected_version)
        lock = coupon.current_lock
        command = Command(
            OperationType.VOID, ctx, now, changes=UNBOUND,
            lease_changes=None if lock is None else {"status": LockStatus.RELEASED,
                                                     "ended_at": now},
            ledger={"order_id": coupon.locked_order_id or "", "lock": lock,
                    "refund_id": refund_id, **reason_fields(reason)},
        )
        apply_transition(coupon, command, CouponStatus.VOID, expected_version)
        return StateResult.of(coupon)

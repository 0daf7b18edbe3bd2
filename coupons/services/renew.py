from dataclasses import dataclass

from coupons import clock
from coupons.ledger_reasons import reason, reason_fields
from coupons.models import CouponStatus, OperationType
from coupons.write.context import command_transaction
from coupons.write.leases import check_lease, lease_end
from coupons.write.payloads import iso
from coupons.write.refusals import refusals_recorded
from coupons.write.rows import lock_coupon_row
from coupons.write.transitions import Command, apply_transition, guard


@dataclass(frozen=True)
class RenewResult:
    coupon_id: int
    state_version: int
    expires_at: object

    def payload(self) -> dict:
        return {
            "coupon_id": self.coupon_id,
            "state_version": self.state_version,
            "expires_at": iso(self.expires_at),
            "status": CouponStatus.LOCKED,
        }


def coupon_renew(*, coupon_id, lease, ctx, lease_seconds=None, lease_until=None) -> RenewResult:
    """Extend the current lease; only the lease holder can, and it costs a version."""
    with (
        refusals_recorded(OperationType.RENEW, ctx, coupon_id=coupon_id, order_id=lease.order_id),
        command_transaction(ctx),
    ):
        now = clock.now()
        coupon = lock_coupon_row(coupon_id, ctx=ctx)
        guard(OperationType.RENEW, coupon)
        check_lease(coupon, lease, ctx)
        expires_at = lease_end(now, lease_seconds=lease_seconds, lease_until=lease_until)
        lock = coupon.current_lock
        command = Command(
            OperationType.RENEW, ctx, now, owner=(lease.order_id, lease.token_hash),
            changes={"lock_expires_at": expires_at}, lease_changes={"expires_at": expires_at},
            ledger={"order_id": lease.order_id, "lock": lock,
                    **reason_fields(reason("lease_moved", **{"from": iso(lock.expires_at),
                                                             "to": iso(expires_at)}))},
        )
        apply_transition(coupon, command, CouponStatus.LOCKED, lease.expected_version)
        return RenewResult(coupon.pk, coupon.state_version, expires_at)

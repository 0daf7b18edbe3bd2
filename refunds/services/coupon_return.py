from django.db import transaction
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.errors import InvalidState, VersionConflict
from coupons.ledger_reasons import reason_fields
from coupons.models import CouponOperation, CouponStatus, OperationType, Redemption
from coupons.services.release import StateResult
from coupons.write.declared import declared_moves
from coupons.write.refusals import refusals_recorded
from coupons.write.rows import lock_coupon_row
from coupons.write.transitions import Command, apply_transition, guard, is_past_validity


def coupon_return(*, coupon_id, redemption: Redemption, refund_id: str, expected_version: int,
                  ctx, reason: str = "") -> tuple[StateResult, CouponOperation]:
    """Give a redeemed coupon back after a refund decision RETURN (docs/design.md).

    Appends a RETURN that names the original REDEEM and the refund: USED → AVAILABLE, or
    EXPIRED when past valid_until. The redemption is kept, marked no longer successful, so the
    coupon may be redeemed again; nothing of the original fact is deleted or edited.
    """
    with (
        refusals_recorded(OperationType.RETURN, ctx, coupon_id=coupon_id,
                          order_id=redemption.order_id),
        transaction.atomic(),
    ):
        now = clock.now()
        coupon = lock_coupon_row(coupon_id)
        guard(OperationType.RETURN, coupon)
        if coupon.state_version != expected_version:
            raise VersionConflict(coupon=coupon, expected_version=expected_version)
        original = CouponOperation.objects.filter(
            coupon_id=coupon_id, op_type=OperationType.REDEEM, lock_id=redemption.lock_id
        ).first()
        # Only the redemption that made the coupon USED can be returned.
        if (redemption.coupon_id != coupon.pk or original is None
                or not Redemption.objects.filter(pk=redemption.pk, succeeded=True).exists()):
            raise InvalidState(_("This redemption is not the coupon's current one."), coupon=coupon,
                               redemption_id=redemption.pk)
        declared_moves(Redemption.objects.filter(pk=redemption.pk, succeeded=True),
                       {"succeeded": False}, step="returned", actor=ctx.actor)
        to_state = CouponStatus.EXPIRED if is_past_validity(coupon, now) else CouponStatus.AVAILABLE
        command = Command(OperationType.RETURN, ctx, now, ledger={
            "order_id": redemption.order_id, "payment_id": redemption.payment_id,
            "refund_id": refund_id, "original_operation": original, **reason_fields(reason)})
        operation = apply_transition(coupon, command, to_state, expected_version)
        return StateResult(coupon.pk, coupon.state_version, coupon.status), operation

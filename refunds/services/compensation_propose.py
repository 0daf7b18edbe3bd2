from decimal import Decimal

from django.db import transaction
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.errors import CompensationPending, NotFound, ValidationFailed
from coupons.models import CouponOperation
from coupons.services.reversals import reversal_target
from coupons.write.declared import declared_insert
from coupons.write.refusals import refusals_recorded
from coupons.write.rows import lock_coupon_row
from refunds.models import Compensation


def compensation_propose(
    *, coupon_id, operation_id, reason: str, amount: Decimal | None = None, ctx
) -> Compensation:
    """Propose undoing one ledger operation, or (with an amount) paying money for it.

    Nothing changes on the coupon: another operator decides (compensation_decide). A reversal
    is checked now as it will be at approval (reversible, the coupon has not moved on), so an
    operator hears at once when it cannot be done. One open proposal per operation.
    """
    with (
        refusals_recorded("COMP_PROPOSE", ctx, coupon_id=coupon_id),
        transaction.atomic(),
    ):
        if not reason.strip():
            raise ValidationFailed(_("Say why."), reason=gettext("Required."))
        now = clock.now()
        # The coupon's row lock serialises proposals for its operations (lock order: coupon
        # before its compensations); the partial unique index is the last line of defence.
        coupon = lock_coupon_row(coupon_id)
        operation = CouponOperation.objects.filter(pk=operation_id, coupon=coupon).first()
        if operation is None:
            raise NotFound(_("No such operation of this coupon."), coupon_id=coupon_id,
                           operation_id=operation_id)
        pending = Compensation.objects.filter(
            operation=operation, status=Compensation.Status.PROPOSED
        ).first()
        if pending is not None:
            raise CompensationPending(compensation_id=pending.pk, operation_id=operation.pk)
        if amount is None:
            reversal_target(coupon, operation, now)
        compensation = Compensation(
            kind=Compensation.Kind.REVERSE_OPERATION if amount is None else Compensation.Kind.MONEY,
            coupon=coupon, operation=operation, order_id=operation.order_id, amount=amount,
            reason=reason[:500], created_by=ctx.actor, created_at=now,
            idempotency_key=ctx.idempotency_key, request_hash=ctx.request_hash,
        )
        # The proposal is its journal entry: the approval decides what that entry says.
        declared_insert(compensation, kind="proposed", actor=ctx.actor)
        return compensation

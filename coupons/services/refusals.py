from contextlib import contextmanager

from coupons import clock
from coupons.errors import CouponError
from coupons.models import CommandRejection


@contextmanager
def refusals_recorded(op_type: str, ctx, *, coupon_id=None, order_id: str = ""):
    """Record a refused command in the rejection log once its transaction has rolled back."""
    try:
        yield
    except CouponError as error:
        CommandRejection.objects.create(
            op_type=op_type,
            coupon_id_ref=coupon_id,
            order_id=order_id or "",
            actor=ctx.actor,
            error_code=error.code,
            message=error.message[:500],
            details=error.details,
            idempotency_key=ctx.idempotency_key,
            created_at=clock.now(),
        )
        raise

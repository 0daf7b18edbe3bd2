from contextlib import contextmanager

from django.db import transaction

from coupons import clock
from coupons.errors import CouponError
from coupons.models import CommandRejection
from coupons.services.idempotency import idempotency_complete


@contextmanager
def refusals_recorded(op_type: str, ctx, *, coupon_id=None, order_id: str = ""):
    """Record a refused command in the rejection log once its transaction has rolled back.

    The refusal is also the stored answer for the caller's Idempotency-Key, so a retry with the
    same key gets the same error instead of a second attempt.
    """
    try:
        yield
    except CouponError as error:
        with transaction.atomic():
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
            idempotency_complete(ctx, status=error.http_status, body=error.as_body())
        raise

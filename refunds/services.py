from django.db import IntegrityError, transaction

from coupons import clock
from refunds.models import Compensation


def compensation_propose(*, kind, order_id, coupon, amount, reason, actor) -> Compensation:
    """Record what an order is owed; proposing the same shortfall twice returns the first."""
    existing = Compensation.objects.filter(order_id=order_id, coupon=coupon, kind=kind).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return Compensation.objects.create(
                kind=kind, order_id=order_id, coupon=coupon, amount=amount,
                reason=reason[:500], created_by=actor, created_at=clock.now(),
            )
    except IntegrityError:  # a concurrent proposal of the same shortfall won
        return Compensation.objects.get(order_id=order_id, coupon=coupon, kind=kind)

from django.db import IntegrityError, transaction

from coupons import clock
from coupons.ledger_reasons import reason_fields
from coupons.write.declared import declared_insert
from refunds.models import Compensation


def compensation_record(*, kind, order_id, coupon, amount, reason, actor) -> Compensation:
    """Record what an order is owed (the database journals it); proposing the same shortfall twice
    returns the first (the unique constraint refuses a concurrent second, which then reads the
    winner)."""
    existing = Compensation.objects.filter(order_id=order_id, coupon=coupon, kind=kind).first()
    if existing is not None:
        return existing
    now = clock.now()
    compensation = Compensation(order_id=order_id, coupon=coupon, kind=kind, amount=amount,
                                **reason_fields(reason), created_by=actor, created_at=now)
    try:
        with transaction.atomic():
            declared_insert(compensation, kind="recorded", actor=actor)
    except IntegrityError:
        return Compensation.objects.get(order_id=order_id, coupon=coupon, kind=kind)
    return compensation

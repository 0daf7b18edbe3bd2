from django.db import IntegrityError, transaction

from coupons import clock
from coupons.evidence.journal import journaled_insert
from coupons.ledger_reasons import reason_fields
from refunds.models import Compensation


def compensation_record(*, kind, order_id, coupon, amount, reason, actor) -> Compensation:
    """Record what an order is owed, with its journal entry; proposing the same shortfall twice
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
            journaled_insert(compensation, kind="recorded", actor=actor, at=now)
    except IntegrityError:
        return Compensation.objects.get(order_id=order_id, coupon=coupon, kind=kind)
    return compensation

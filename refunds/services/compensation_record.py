from coupons import clock
from refunds.models import Compensation


def compensation_record(*, kind, order_id, coupon, amount, reason, actor) -> Compensation:
    """Record what an order is owed; proposing the same shortfall twice returns the first
    (get_or_create reads the winner when a concurrent proposal commits first)."""
    compensation, _ = Compensation.objects.get_or_create(
        order_id=order_id, coupon=coupon, kind=kind,
        defaults={"amount": amount, "reason": reason[:500], "created_by": actor,
                  "created_at": clock.now()},
    )
    return compensation

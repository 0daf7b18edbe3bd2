"""Reads of what we were told about orders, and of the leases orders hold."""

from django.db.models import Max

from coupons.models import CouponOperation, FactType, OperationType, OrderCoupon, OrderFact
from coupons.services import LeaseProof

PAYMENT_FACTS = (FactType.PAYMENT_SUCCEEDED, FactType.FINAL_PAYMENT_SUCCEEDED)


def order_binding(order_id: str) -> OrderCoupon | None:
    """The order's latest coupon binding (its newest lease and discount snapshot)."""
    return (
        OrderCoupon.objects.select_related("lock", "coupon__template_version")
        .filter(order_id=order_id)
        .order_by("-created_at", "-id")
        .first()
    )


def order_payment(order_id: str) -> OrderFact | None:
    """The order's successful payment, if one was reported."""
    return (
        OrderFact.objects.filter(order_id=order_id, fact_type__in=PAYMENT_FACTS)
        .order_by("recorded_at", "id")
        .first()
    )


def orders_paid(order_ids) -> set[str]:
    """Which of these orders had a successful payment reported: one query for a batch."""
    return set(OrderFact.objects.filter(order_id__in=order_ids, fact_type__in=PAYMENT_FACTS)
               .values_list("order_id", flat=True).distinct())


def stored_lease(lock) -> LeaseProof:
    """Prove a lease the way its holder would: lock id, stored token hash, and the version the
    lease last moved the coupon to (its LOCK or latest RENEW). Never the coupon id alone."""
    version = CouponOperation.objects.filter(
        lock=lock, op_type__in=(OperationType.LOCK, OperationType.RENEW)
    ).aggregate(Max("to_version"))["to_version__max"]
    return LeaseProof.from_lock(lock, expected_version=version)

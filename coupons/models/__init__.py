from coupons.models.clients import ServiceClient
from coupons.models.coupons import CouponStatus, UserCoupon
from coupons.models.idempotency import IdempotencyRecord
from coupons.models.ledger import CouponOperation, OperationType
from coupons.models.locks import CouponLock, LockStatus, OrderCoupon
from coupons.models.outbox import OutboxEvent
from coupons.models.redemptions import Redemption
from coupons.models.rejections import CommandRejection
from coupons.models.templates import (
    CouponKind,
    CouponTemplate,
    CouponTemplateVersion,
    ExpiryDuringLock,
)

__all__ = [
    "CommandRejection",
    "CouponKind",
    "CouponLock",
    "CouponOperation",
    "CouponStatus",
    "CouponTemplate",
    "CouponTemplateVersion",
    "ExpiryDuringLock",
    "IdempotencyRecord",
    "LockStatus",
    "OperationType",
    "OrderCoupon",
    "OutboxEvent",
    "Redemption",
    "ServiceClient",
    "UserCoupon",
]

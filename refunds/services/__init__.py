"""After-sale use cases: refund decisions, return policies, compensations and reversals.

Each one that changes a coupon's state does it through the coupon core's one transition function
(coupons.write.transitions.apply_transition), so its ledger and outbox rows are appended in
the same transaction as the change; nothing here writes a status or a version itself.
"""

from refunds.services.coupon_return import coupon_return
from refunds.services.refund_receive import refund_receive
from refunds.services.refund_review import refund_approve, refund_reject

__all__ = ["coupon_return", "refund_approve", "refund_receive", "refund_reject"]

from coupons.models.cases import CaseStatus, ConflictCase, Recommendation
from coupons.models.checkpoints import LedgerCheckpoint
from coupons.models.clients import ServiceClient
from coupons.models.coupons import CouponStatus, UserCoupon
from coupons.models.customers import CustomerProfile
from coupons.models.findings import (
    Finding,
    FindingKind,
    FindingStatus,
    ReconciliationRun,
    Repair,
    Severity,
)
from coupons.models.goodwill import GoodwillProposal
from coupons.models.idempotency import IdempotencyRecord
from coupons.models.inbox import FactType, InboxMessage, OrderFact
from coupons.models.journal import Journaled, JournalEntry, JournalLeaf, JournalNode
from coupons.models.ledger import CouponOperation, OperationType
from coupons.models.locks import CouponLock, LockStatus, OrderCoupon
from coupons.models.outbox import OutboxEvent
from coupons.models.presale import (
    ExpiryWarning,
    FinalPaymentReminder,
    PresaleSettlement,
    SettlementResult,
)
from coupons.models.redemptions import Redemption
from coupons.models.rejections import CommandRejection
from coupons.models.retention import PruneRun
from coupons.models.templates import (
    Channel,
    CouponKind,
    CouponTemplate,
    CouponTemplateVersion,
    ExpiryDuringLock,
)
from coupons.models.watermarks import CheckWatermark

__all__ = [
    "CheckWatermark",
    "CaseStatus",
    "ConflictCase",
    "FactType",
    "Finding",
    "FindingKind",
    "FindingStatus",
    "GoodwillProposal",
    "ReconciliationRun",
    "Repair",
    "Severity",
    "InboxMessage",
    "Journaled",
    "JournalEntry",
    "JournalLeaf",
    "JournalNode",
    "LedgerCheckpoint",
    "OrderFact",
    "PresaleSettlement",
    "Recommendation",
    "SettlementResult",
    "Channel",
    "CommandRejection",
    "CouponKind",
    "CouponLock",
    "CouponOperation",
    "CouponStatus",
    "CouponTemplate",
    "CouponTemplateVersion",
    "CustomerProfile",
    "ExpiryDuringLock",
    "ExpiryWarning",
    "FinalPaymentReminder",
    "IdempotencyRecord",
    "LockStatus",
    "OperationType",
    "OrderCoupon",
    "OutboxEvent",
    "PruneRun",
    "Redemption",
    "ServiceClient",
    "UserCoupon",
]

"""Reconciliation (docs/operating.md): find where order, payment, refund and coupon states forked,
record it as findings, and let an operator apply the proposed repair through the services."""

from operations.reconcile.repair import finding_apply, finding_dismiss
from operations.reconcile.run import reconcile_run

__all__ = ["finding_apply", "finding_dismiss", "reconcile_run"]

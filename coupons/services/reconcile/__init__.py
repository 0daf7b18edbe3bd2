"""Reconciliation (SPEC §9): find where order, payment, refund and coupon states forked,
record it as findings, and let an operator apply the proposed repair through the services."""

from coupons.services.reconcile.repair import finding_apply, finding_dismiss
from coupons.services.reconcile.run import reconcile_run

__all__ = ["finding_apply", "finding_dismiss", "reconcile_run"]

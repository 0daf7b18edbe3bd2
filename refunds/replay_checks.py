"""Invariant 6 of the coupon check (coupons.evidence.replay) where it needs after-sale's rows:
every RETURN was executed for a refund decision that names its policy version."""

from django.utils.translation import gettext as _

from coupons.models import OperationType
from refunds.models import RefundCoupon


def check_returns(report, coupon, operations) -> None:
    """Invariant 6 beyond the ledger: each RETURN was executed for a refund decision that
    names its policy version, and the redemption it returned is no longer successful."""
    returns = [op for op in operations if op.op_type == OperationType.RETURN]
    if not returns:
        return
    decided = dict(
        RefundCoupon.objects.filter(operation__in=returns, policy_version__isnull=False)
        .values_list("operation_id", "refund_id")
    )
    # A RETURN later reversed (an approved compensation) may make its redemption count again.
    reversed_ops = {op.original_operation_id for op in operations
                    if op.op_type == OperationType.REVERSE}
    # Looked up among the rows already read: one query per RETURN made long ledgers slow.
    by_id = {op.pk: op for op in operations}
    returned_locks = {by_id[op.original_operation_id].lock_id for op in returns
                      if op.original_operation_id in by_id and op.pk not in reversed_ops}
    still_successful = coupon.redemptions.filter(lock_id__in=returned_locks, succeeded=True)
    for op in returns:
        step = f"RETURN v{op.from_version}→v{op.to_version}"
        if op.pk not in decided:
            report.fail(6, _("%(step)s has no refund decision with a policy version")
                        % {"step": step})
        elif decided[op.pk] != op.refund_id:
            report.fail(6, _("%(step)s names refund %(refund)s, its decision %(decided)s")
                        % {"step": step, "refund": repr(op.refund_id),
                           "decided": repr(decided[op.pk])})
    for redemption in still_successful:
        report.fail(6, _("redemption %(redemption)s was returned but still counts as "
                         "successful") % {"redemption": redemption.pk})


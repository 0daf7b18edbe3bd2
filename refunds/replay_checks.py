"""Invariants 6 and 8 of the coupon check (coupons.evidence.replay) where they need after-sale's
rows: every RETURN was executed for a refund decision that names its policy version; every refund
decision and compensation of the coupon still carries its seal."""

from django.utils.translation import gettext as _

from coupons.evidence import seals
from coupons.models import OperationType
from refunds.models import Compensation, RefundCoupon


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


# After-sale's sealed rows of a coupon, by the name the check's marks give them.
SEALED = {"refund_decisions": RefundCoupon, "compensations": Compensation}


def newest_row_sql(coupon_column: str) -> dict[str, str]:
    """SQL for the newest id of each of SEALED for the coupon in `coupon_column` (0: none)."""
    return {name: f"SELECT coalesce(max(x.id), 0) FROM {model._meta.db_table} x "
                  f"WHERE x.coupon_id = {coupon_column}"
            for name, model in SEALED.items()}


def broken_seals(coupon, after: dict, newest: dict | None) -> tuple[list[str], dict]:
    """The seals that fail among the coupon's rows after the ids in `after` (all of them when
    it is empty); and how far each table was read. `newest` (from newest_row_sql; None when
    unknown) skips a table with nothing new."""
    rows, marks = [], {}
    for name, model in SEALED.items():
        mark, found = after.get(name, 0), []
        if newest is None or newest[name] > mark:
            found = list(model.objects.filter(coupon=coupon, pk__gt=mark))
        rows += found
        marks[name] = max([mark, *(row.pk for row in found)])
    return seals.broken_seals(rows), marks

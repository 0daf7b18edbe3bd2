"""Which ledger operations a compensation may reverse, and the state a reversal restores.

| reversed op | restores | and |
|---|---|---|
| REDEEM | AVAILABLE (EXPIRED past valid_until) | its redemption stops counting (succeeded=False) |
| VOID | the state before it; LOCKED becomes AVAILABLE (EXPIRED past valid_until) | |
| EXPIRE | AVAILABLE, only while still inside valid_until | |
| RETURN | USED | its redemption counts again, if no other one does |

A lease is never restored: the REDEEM or VOID that ended it consumed or released the lock and
its token, and the order that held it has moved on. So a reversal never lands on LOCKED.

"Moved on": a reversal must be the next change of state after the operation it reverses. Any
later ledger row other than COMPENSATE (money, same state) means the coupon moved on (a new
LOCK, a RENEW, a RETURN, another REVERSE ...): 409 VERSION_CONFLICT naming that row. The
reversal itself is still a compare-and-set on the coupon's current state and version.
"""

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from coupons.errors import InvalidState, OperationNotReversible, VersionConflict
from coupons.evidence.journal import journaled_moves
from coupons.models import CouponStatus as S
from coupons.models import OperationType as Op
from coupons.models import Redemption
from coupons.write.transitions import is_past_validity

REVERSIBLE = {Op.REDEEM, Op.VOID, Op.EXPIRE, Op.RETURN}
# What an operator should do instead, for every operation that is not reversible.
INSTEAD = {
    Op.ISSUE: _("void the coupon instead"),
    Op.LOCK: _("the order releases its lease instead (or the lease scanner does)"),
    Op.RENEW: _("a renewal changes only the lease end; the lease scanner or a release ends it"),
    Op.RELEASE: _("a lease cannot be restored; the order locks the coupon again"),
    Op.REVERSE: _("a reversal is not reversed; run the command again through the services"),
    Op.COMPENSATE: _("money paid is not taken back by the coupon service"),
}
# Rows that may follow the reversed operation without it having "moved on".
STATE_KEEPING = {Op.COMPENSATE}


def restored_state(operation) -> str:
    """The state before `operation`, with LOCKED (a lease) read as AVAILABLE."""
    return S.AVAILABLE if operation.from_state == S.LOCKED else operation.from_state


def reversal_targets(operation) -> set[str]:
    """Every state a REVERSE of `operation` may land on (the replay's check)."""
    before = restored_state(operation)
    return {S.AVAILABLE, S.EXPIRED} if before == S.AVAILABLE else {before}


def reversal_target(coupon, operation, now) -> str:
    """The state a REVERSE of `operation` gives now, or a refusal saying why it cannot.

    The caller holds the coupon's row lock, so nothing moves between this check and the write.
    """
    if operation.op_type not in REVERSIBLE:
        raise OperationNotReversible(
            # format_lazy: the answer is worded per request, the rejection log in English.
            format_lazy(_("{op} cannot be reversed: {instead}."), op=operation.op_type,
                        instead=INSTEAD[operation.op_type]),
            operation_id=operation.pk, op_type=operation.op_type,
        )
    reversal = operation.reversals.filter(op_type=Op.REVERSE).first()
    if reversal is not None:
        raise InvalidState(_("This operation was already reversed."), coupon=coupon,
                           operation_id=operation.pk, reversed_by=reversal.pk)
    later = (coupon.operations.filter(to_version__gt=operation.to_version)
             .exclude(op_type__in=STATE_KEEPING).order_by("to_version").first())
    if later is not None:
        raise VersionConflict(
            _("The coupon moved on since this operation; only its latest change can be reversed."),
            coupon=coupon, operation_id=operation.pk, operation_version=operation.to_version,
            moved_on_by={"operation_id": later.pk, "op_type": later.op_type,
                         "to_version": later.to_version},
        )
    target = restored_state(operation)
    if target == S.AVAILABLE and is_past_validity(coupon, now):
        target = S.EXPIRED
    if target == coupon.status:
        raise InvalidState(
            format_lazy(_("Nothing to restore: the coupon is past valid_until, so it would "
                          "stay {state}."), state=target),
            coupon=coupon, operation_id=operation.pk,
        )
    if operation.op_type == Op.RETURN:
        other = coupon.redemptions.filter(succeeded=True).first()
        if other is not None:
            raise InvalidState(_("Another redemption of this coupon counts now."), coupon=coupon,
                               operation_id=operation.pk, redemption_id=other.pk)
    return target


def restore_redemption(operation, *, actor: str, now) -> None:
    """REDEEM reversed: its redemption stops counting; RETURN reversed: it counts again.

    The Redemption row stays either way: only its `succeeded` flag says whether it counts,
    and the journal has each move.
    """
    if operation.op_type == Op.REDEEM:
        lock_id, succeeded = operation.lock_id, False
    elif operation.op_type == Op.RETURN:
        lock_id, succeeded = operation.original_operation.lock_id, True
    else:
        return
    journaled_moves(Redemption.objects.filter(lock_id=lock_id), {"succeeded": succeeded},
                    kind="reversed", actor=actor, at=now)

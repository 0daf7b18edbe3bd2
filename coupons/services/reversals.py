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

from dataclasses import dataclass

from django.db.models import JSONField, OuterRef, Subquery
from django.db.models.functions import JSONObject
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from coupons.errors import InvalidState, OperationNotReversible, VersionConflict
from coupons.models import CouponOperation, Redemption
from coupons.models import CouponStatus as S
from coupons.models import OperationType as Op
from coupons.write.declared import declared_moves
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


@dataclass(frozen=True)
class ReversalReads:
    """What `reversal_target` reads besides the coupon: the REVERSE that already reversed the
    operation, the first later row that moved the coupon on, and the coupon's counting
    redemption (ids; the later row as the refusal names it)."""

    reversed_by: int | None
    moved_on_by: dict | None
    counting_redemption: int | None


def _reads_of(operation_id, coupon_id, to_version) -> dict:
    """The three reads as subqueries, for one operation or a whole queryset of rows."""
    reversals = CouponOperation.objects.filter(original_operation_id=operation_id,
                                               op_type=Op.REVERSE)
    later = (CouponOperation.objects.filter(coupon_id=coupon_id, to_version__gt=to_version)
             .exclude(op_type__in=STATE_KEEPING).order_by("to_version")
             .values(row=JSONObject(operation_id="id", op_type="op_type",
                                    to_version="to_version")))
    counting = Redemption.objects.filter(coupon_id=coupon_id, succeeded=True)
    return {
        "reversed_by": Subquery(reversals.order_by("id").values("id")[:1]),
        "moved_on_by": Subquery(later[:1], output_field=JSONField()),
        "counting_redemption": Subquery(counting.order_by("id").values("id")[:1]),
    }


def with_reversal_reads(queryset, operation: str = "operation"):
    """`queryset`'s rows, each with what `reversal_target` reads for its `operation`, in the
    same query: a page of proposals costs no query per row (`reversal_reads_of`)."""
    reads = _reads_of(OuterRef(f"{operation}_id"), OuterRef(f"{operation}__coupon_id"),
                      OuterRef(f"{operation}__to_version"))
    return queryset.annotate(**{f"reversal_{name}": read for name, read in reads.items()})


def reversal_reads_of(row) -> ReversalReads | None:
    """The reads `with_reversal_reads` annotated on `row`; None if it was not read so."""
    if not hasattr(row, "reversal_reversed_by"):
        return None
    return ReversalReads(row.reversal_reversed_by, row.reversal_moved_on_by,
                         row.reversal_counting_redemption)


def _read(operation) -> ReversalReads:
    one = CouponOperation.objects.filter(pk=operation.pk).values(
        **_reads_of(OuterRef("id"), OuterRef("coupon_id"), OuterRef("to_version"))).get()
    return ReversalReads(**one)


def reversal_target(coupon, operation, now, *, reads: ReversalReads | None = None) -> str:
    """The state a REVERSE of `operation` gives now, or a refusal saying why it cannot.

    The caller holds the coupon's row lock, so nothing moves between this check and the write;
    `reads`, made beforehand for a page (`with_reversal_reads`), serve a page's preview only.
    """
    if operation.op_type not in REVERSIBLE:
        raise OperationNotReversible(
            # format_lazy: the answer is worded per request, the rejection log in English.
            format_lazy(_("{op} cannot be reversed: {instead}."), op=operation.op_type,
                        instead=INSTEAD[operation.op_type]),
            operation_id=operation.pk, op_type=operation.op_type,
        )
    reads = reads or _read(operation)
    if reads.reversed_by is not None:
        raise InvalidState(_("This operation was already reversed."), coupon=coupon,
                           operation_id=operation.pk, reversed_by=reads.reversed_by)
    if reads.moved_on_by is not None:
        raise VersionConflict(
            _("The coupon moved on since this operation; only its latest change can be reversed."),
            coupon=coupon, operation_id=operation.pk, operation_version=operation.to_version,
            moved_on_by=reads.moved_on_by,
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
    if operation.op_type == Op.RETURN and reads.counting_redemption is not None:
        raise InvalidState(_("Another redemption of this coupon counts now."), coupon=coupon,
                           operation_id=operation.pk, redemption_id=reads.counting_redemption)
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
    declared_moves(Redemption.objects.filter(lock_id=lock_id), {"succeeded": succeeded},
                   step="reversed", actor=actor)

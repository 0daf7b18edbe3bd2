"""An operator's answer to a finding: apply its proposed repair, or dismiss it with a reason.

A repair is one of the ordinary commands (redeem, release, return) run by the operator, so it
writes its own ledger and outbox rows under their name; the run itself never repairs. Before
acting, the coupon is checked again under its row lock: a finding that no longer holds closes
instead of repairing twice.
"""

from dataclasses import replace

from django.db import transaction
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.errors import BrokerUnavailable, FindingNotOpen, NotFound, ValidationFailed
from coupons.events.facts import stored_lease
from coupons.evidence.journal import require_folds, with_journal
from coupons.models import (
    CouponStatus,
    Finding,
    FindingStatus,
    OrderCoupon,
    Repair,
    UserCoupon,
)
from coupons.services.lock import coupon_lock
from coupons.services.redeem import coupon_redeem
from coupons.services.release import coupon_release
from coupons.write.context import LeaseProof
from coupons.write.declared import declared_moves, declared_update
from coupons.write.rows import lock_coupon_row
from operations.reconcile.checks import COUPON_FIELDS, check_batch, load_batch
from operations.relay import Relay
from refunds.models import RefundCoupon
from refunds.services.coupon_return import coupon_return


def finding_apply(*, finding_id, ctx) -> Finding:
    """Run the finding's proposed repair; a refused command leaves the finding open."""
    finding = Finding.objects.filter(pk=finding_id).first()
    if finding is None:
        raise NotFound(_("No such finding."), finding_id=finding_id)
    redriven = finding.repair == Repair.REDRIVE_EVENT
    if redriven:
        # Publishing talks to the broker: never inside the coupon's locked transaction.
        _ensure_open(finding)
        _redrive_events(finding.coupon_id)
    # The answer is the finding, not the nested command's result.
    ctx = replace(ctx, idempotency_record_id=None)
    with transaction.atomic():
        coupon = lock_coupon_row(finding.coupon_id)  # lock order: coupon before the finding
        finding = _ensure_open(Finding.objects.select_for_update().get(pk=finding_id))
        fault = _still_holds(finding)
        if fault is None and redriven:
            return _close(finding, FindingStatus.RESOLVED, resolution="APPLIED", ctx=ctx,
                          note=f"applied {Repair.REDRIVE_EVENT}")
        if fault is None:
            return _close(finding, FindingStatus.CLOSED, ctx=ctx)
        if fault.repair == Repair.MANUAL_REVIEW:
            raise ValidationFailed(_("No command repairs this safely: fix it by hand (a "
                                     "compensation, a void), then dismiss it with what was done."),
                                   repair=fault.repair)
        REPAIRS[fault.repair](fault, coupon, ctx)
        return _close(finding, FindingStatus.RESOLVED, resolution="APPLIED", ctx=ctx,
                      note=f"applied {fault.repair}")


def finding_dismiss(*, finding_id, note: str, ctx) -> Finding:
    """Close a finding a person has looked at; while the fault holds, runs keep it dismissed."""
    if not note.strip():
        raise ValidationFailed(_("Say why it is dismissed."), note=gettext("Required."))
    with transaction.atomic():
        finding = Finding.objects.filter(pk=finding_id).first()
        if finding is None:
            raise NotFound(_("No such finding."), finding_id=finding_id)
        lock_coupon_row(finding.coupon_id)
        finding = _ensure_open(Finding.objects.select_for_update().get(pk=finding_id))
        return _close(finding, FindingStatus.RESOLVED, resolution="DISMISSED", ctx=ctx,
                      note=note)


def _ensure_open(finding: Finding) -> Finding:
    if finding.status != FindingStatus.OPEN:
        raise FindingNotOpen(current_state=finding.status, finding_id=finding.pk)
    return finding


def _still_holds(finding: Finding):
    coupons = list(UserCoupon.objects.filter(pk=finding.coupon_id).values(*COUPON_FIELDS))
    key = (finding.kind, finding.coupon_id, finding.subject)
    return next((d for d in check_batch(load_batch(coupons)) if d.key == key), None)


def _close(finding: Finding, status: str, *, ctx, resolution="", note="") -> Finding:
    """The finding's last move, in one statement (the database journals it)."""
    now = clock.now()
    if status == FindingStatus.CLOSED:
        kind, changes = "closed", {"status": status, "closed_at": now}
    else:
        kind, changes = resolution.lower(), {
            "status": status, "resolution": resolution, "resolution_note": note[:1000],
            "resolved_by": ctx.actor, "resolved_at": now}
    declared_moves(Finding.objects.filter(pk=finding.pk, status=FindingStatus.OPEN), changes,
                   step=kind, actor=ctx.actor)
    for name, value in changes.items():
        setattr(finding, name, value)
    return finding


def _compensating_redeem(fault, coupon, ctx) -> None:
    """The paid order gets the coupon it paid with: redeem its lease, or lock it again first."""
    order_id = fault.subject
    if coupon.status == CouponStatus.LOCKED:
        lease = stored_lease(coupon.current_lock)
    else:
        binding = (OrderCoupon.objects.filter(coupon=coupon, order_id=order_id)
                   .order_by("-created_at", "-id").first())
        locked = coupon_lock(
            coupon_id=coupon.pk, order_id=order_id, user_id=coupon.user_id,
            order_amount=binding.order_amount, quote_id=binding.quote_id, ctx=ctx,
        )
        lease = LeaseProof.from_lock(locked.lock, expected_version=locked.state_version)
    coupon_redeem(coupon_id=coupon.pk, lease=lease, payment_id=fault.evidence["payment_id"],
                  ctx=ctx)


def _release(fault, coupon, ctx) -> None:
    coupon_release(coupon_id=coupon.pk, lease=stored_lease(coupon.current_lock), ctx=ctx,
                   reason=f"reconciliation: order {fault.subject} ended unpaid")


def _redrive_return(fault, coupon, ctx) -> None:
    decision = with_journal(RefundCoupon.objects.select_related("redemption")).get(
        pk=fault.evidence["decision_id"])
    require_folds(decision)
    _returned, operation = coupon_return(
        coupon_id=coupon.pk, redemption=decision.redemption, refund_id=decision.refund_id,
        expected_version=coupon.state_version, ctx=ctx,
        reason=f"reconciliation: re-drive of refund {decision.refund_id}'s RETURN",
    )
    # The decision now names the RETURN it always meant; only a decision without one moves.
    declared_update(decision, where={"operation__isnull": True},
                    changes={"operation": operation}, step="return_linked", actor=ctx.actor)


def _redrive_events(coupon_id: int) -> None:
    relay = Relay(coupon_id=coupon_id)
    try:
        result = relay.run_batch()
    finally:
        relay.close()
    if result.error is not None:
        raise BrokerUnavailable(coupon_id=coupon_id, published=result.published)


def _event_still_held(fault, coupon, ctx) -> None:
    # Published above, outside the lock; still unpublished means it waits behind an earlier
    # event of the coupon that a running relay holds right now.
    raise ValidationFailed(_("The event waits behind an earlier one a relay is sending; try "
                             "again in a moment."), event_id=fault.evidence.get("event_id"))


REPAIRS = {
    Repair.COMPENSATING_REDEEM: _compensating_redeem,
    Repair.RELEASE: _release,
    Repair.REDRIVE_RETURN: _redrive_return,
    Repair.REDRIVE_EVENT: _event_still_held,
}

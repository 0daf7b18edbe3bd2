from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext_lazy as _

from coupons import after_sale, clock
from coupons.errors import CouponExpired, InvalidState, TokenMismatch, VersionConflict
from coupons.ledger_reasons import reason
from coupons.models import (
    CouponOperation,
    CouponStatus,
    ExpiryDuringLock,
    LockStatus,
    OperationType,
    Redemption,
)
from coupons.services.release import end_lease
from coupons.write.context import command_transaction
from coupons.write.leases import check_lease, check_lease_client
from coupons.write.payloads import iso, money
from coupons.write.refusals import refusals_recorded
from coupons.write.rows import lock_coupon_row
from coupons.write.tokens import tokens_match
from coupons.write.transitions import UNBOUND, Command, apply_transition, guard, is_past_validity


@dataclass(frozen=True)
class RedeemResult:
    redemption: Redemption
    state_version: int
    already_redeemed: bool = False

    def payload(self) -> dict:
        return {
            "coupon_id": self.redemption.coupon_id,
            "redemption_id": self.redemption.pk,
            "order_id": self.redemption.order_id,
            "payment_id": self.redemption.payment_id,
            "discount_amount": money(self.redemption.discount_amount),
            "state_version": self.state_version,
            "status": CouponStatus.USED,
            "already_redeemed": self.already_redeemed,
        }


def coupon_redeem(*, coupon_id, lease, payment_id: str, ctx) -> RedeemResult:
    """Consume the coupon for the payment of the order that holds its current lease.

    Check order (docs/design.md): an order that already redeemed gets its redemption back with no
    new effect, if it proves the lease that redemption consumed; then status LOCKED, then client,
    token, order and version. A lease past its end that was not yet released still redeems: the
    lease end is a release backstop, not a pay deadline. Under STRICT and SUBSTITUTE templates a
    redeem past valid_until releases the coupon to EXPIRED and answers COUPON_EXPIRED
    (docs/design.md).
    """
    with refusals_recorded(OperationType.REDEEM, ctx, coupon_id=coupon_id,
                           order_id=lease.order_id):
        with command_transaction(ctx):
            now = clock.now()
            coupon = lock_coupon_row(coupon_id, ctx=ctx)
            if coupon.status == CouponStatus.USED:
                existing = coupon.redemptions.select_related("lock").filter(
                    succeeded=True, order_id=lease.order_id
                ).first()
                if existing is not None:
                    check_consumed_lease(coupon, existing, lease, payment_id=payment_id, ctx=ctx)
                    return RedeemResult(existing, coupon.state_version, already_redeemed=True)
            guard(OperationType.REDEEM, coupon)
            check_lease(coupon, lease, ctx)
            if not expired_for_redeem(coupon, now):
                if coupon.refunds_awaiting_redemption is False:
                    return _redeem(coupon, lease, payment_id=payment_id, ctx=ctx, now=now)
                # A refund that came before this redemption is decided now, in this
                # transaction (and its own savepoint: a refused decision undoes the redeem).
                with transaction.atomic():
                    result = _redeem(coupon, lease, payment_id=payment_id, ctx=ctx, now=now)
                    after_sale.decide_refunds_awaiting_redemption(
                        coupon=coupon, redemption=result.redemption, ctx=ctx)
                    return result
            strategy = coupon.template_version.expiry_during_lock
            end_lease(coupon, lease, ctx=ctx, now=now,
                      reason=reason("expired_before_redeem", strategy=strategy))
        # The release to EXPIRED has committed (or joined the caller's transaction); the
        # redeem itself is refused.
        raise CouponExpired(valid_until=iso(coupon.valid_until),
                            current_state=coupon.status, current_version=coupon.state_version)


def check_consumed_lease(coupon, redemption, lease, *, payment_id, ctx) -> None:
    """A repeated redeem answers the existing redemption only to the caller that made it.

    The same proof as the first time: the lease's client, its token (and lock id when an
    internal caller gives one), the version it redeemed at, and the same payment. Anyone else
    is a stale caller, refused like one, so the answer never leaks the stored payment id.
    """
    consumed = redemption.lock
    check_lease_client(consumed, ctx)
    if not tokens_match(lease.token_hash, consumed.token_hash) or (
        lease.lock_id is not None and str(lease.lock_id) != str(consumed.pk)
    ):
        raise TokenMismatch(coupon=coupon)
    redeemed_at = CouponOperation.objects.filter(
        coupon=coupon, op_type=OperationType.REDEEM, lock=consumed
    ).values_list("from_version", flat=True).first()
    if lease.expected_version != redeemed_at:
        raise VersionConflict(coupon=coupon, expected_version=lease.expected_version)
    if payment_id != redemption.payment_id:
        raise InvalidState(_("The coupon was already redeemed for another payment of this order."),
                           coupon=coupon, operation=OperationType.REDEEM)


def expired_for_redeem(coupon, now) -> bool:
    """LOCK_HONORS checks validity at LOCK only; STRICT and SUBSTITUTE check it again here."""
    strategy = coupon.template_version.expiry_during_lock
    return strategy != ExpiryDuringLock.LOCK_HONORS and is_past_validity(coupon, now)


def _redeem(coupon, lease, *, payment_id, ctx, now) -> RedeemResult:
    lock = coupon.current_lock
    redemption = Redemption(
        coupon=coupon, lock=lock, order_id=lease.order_id, payment_id=payment_id,
        discount_amount=lock.order_coupon.discount_amount, created_at=now,
    )
    command = Command(
        OperationType.REDEEM, ctx, now, owner=(lease.order_id, lease.token_hash),
        changes=UNBOUND, redemption=redemption,
        lease_changes={"status": LockStatus.CONSUMED, "ended_at": now},
        ledger={"order_id": lease.order_id, "lock": lock, "payment_id": payment_id},
    )
    apply_transition(coupon, command, CouponStatus.USED, lease.expected_version)
    return RedeemResult(redemption, coupon.state_version)

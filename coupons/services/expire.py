from django.db import transaction
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.errors import InvalidState, VersionConflict
from coupons.ledger_reasons import reason, reason_fields
from coupons.models import CouponStatus, OperationType
from coupons.services.release import StateResult
from coupons.write.payloads import iso
from coupons.write.refusals import refusals_recorded
from coupons.write.rows import lock_coupon_row
from coupons.write.transitions import Command, apply_transition, guard, is_past_validity


def coupon_expire(*, coupon_id, expected_version: int, ctx) -> StateResult:
    """An AVAILABLE coupon past valid_until becomes EXPIRED (the expiry scanner's command)."""
    with (
        refusals_recorded(OperationType.EXPIRE, ctx, coupon_id=coupon_id),
        transaction.atomic(),
    ):
        now = clock.now()
        coupon = lock_coupon_row(coupon_id)
        guard(OperationType.EXPIRE, coupon)
        if coupon.state_version != expected_version:
            raise VersionConflict(coupon=coupon, expected_version=expected_version)
        if not is_past_validity(coupon, now):
            raise InvalidState(
                _("The coupon is still valid."), coupon=coupon, valid_until=iso(coupon.valid_until)
            )
        command = Command(OperationType.EXPIRE, ctx, now, ledger=reason_fields(
            reason("past_valid_until", valid_until=iso(coupon.valid_until))))
        apply_transition(coupon, command, CouponStatus.EXPIRED, expected_version)
        return StateResult(coupon.pk, coupon.state_version, coupon.status)

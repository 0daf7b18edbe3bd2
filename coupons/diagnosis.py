"""A plain-language answer to "why can't I use my coupon?" and what support should do."""

from coupons.models import CaseStatus, CouponOperation, CouponStatus, OperationType
from coupons.services.payloads import iso
from coupons.services.transitions import is_past_validity


def coupon_diagnosis(coupon, now) -> dict:
    verdict, action = _verdict(coupon, now)
    cases = list(coupon.conflict_cases.filter(status=CaseStatus.OPEN).order_by("opened_at"))
    if cases:
        verdict += " " + " ".join(
            f"Conflict case #{case.pk} is open for order {case.order_id}: {case.summary}"
            for case in cases
        )
        action = (f"An operator must resolve conflict case #{cases[0].pk} "
                  f"(recommended: {cases[0].recommendation}). " + action)
    return {
        "can_use_now": coupon.status == CouponStatus.AVAILABLE and _in_window(coupon, now),
        "verdict": verdict,
        "support_action": action,
        "open_case_ids": [case.pk for case in cases],
    }


def _in_window(coupon, now) -> bool:
    started = coupon.valid_from is None or coupon.valid_from <= now
    return started and not is_past_validity(coupon, now)


def _last(coupon, op_type) -> CouponOperation | None:
    return coupon.operations.filter(op_type=op_type).order_by("-to_version").first()


def _verdict(coupon, now) -> tuple[str, str]:
    status = coupon.status
    if status == CouponStatus.AVAILABLE:
        if coupon.valid_from is not None and now < coupon.valid_from:
            return (f"Not usable yet: valid from {iso(coupon.valid_from)}.",
                    "Tell the customer when it starts.")
        if is_past_validity(coupon, now):
            return (f"Expired at {iso(coupon.valid_until)}; the expiry scan has not marked it "
                    "yet, and no order can lock it.",
                    "Nothing to repair: it will show EXPIRED after the next expiry scan.")
        until = f" until {iso(coupon.valid_until)}" if coupon.valid_until else ""
        return (f"Usable now{until}.",
                "If checkout refuses it, check the order amount against the minimum "
                f"({coupon.template_version.min_order_amount}) and the customer id.")
    if status == CouponStatus.LOCKED:
        lease_end = iso(coupon.lock_expires_at)
        if coupon.lock_expires_at and coupon.lock_expires_at <= now:
            return (f"Held by order {coupon.locked_order_id}, whose lease ended at {lease_end}; "
                    "the lease scan will release it unless that order was paid.",
                    f"Check order {coupon.locked_order_id}: if it was abandoned, ask the order "
                    "service to close it, which releases the coupon at once.")
        return (f"Locked by order {coupon.locked_order_id} until {lease_end}.",
                f"It frees itself if order {coupon.locked_order_id} is closed or its payment "
                "fails; otherwise it is used when that order is paid.")
    if status == CouponStatus.USED:
        redemption = coupon.redemptions.filter(succeeded=True).first()
        if redemption is None:
            return ("USED without a redemption record.", "Escalate: ledger and redemptions "
                    "disagree (possible ghost redemption).")
        return (f"Used by order {redemption.order_id} (payment {redemption.payment_id}) at "
                f"{iso(redemption.created_at)}.",
                "If that order was refunded, the refund decision says whether it comes back.")
    if status == CouponStatus.EXPIRED:
        how = _last(coupon, OperationType.RELEASE)
        released = (f" It was released from order {how.order_id} after its validity ended."
                    if how and how.to_state == CouponStatus.EXPIRED else "")
        return (f"Expired at {iso(coupon.valid_until)}.{released}",
                "It cannot be used again; a goodwill coupon is an operator's decision.")
    voided = _last(coupon, OperationType.VOID)
    reason = f": {voided.reason}" if voided and voided.reason else ""
    when = f" at {iso(voided.created_at)}" if voided else ""
    return (f"Voided{when}{reason}.", "It cannot be used again.")

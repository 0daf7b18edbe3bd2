"""A plain-language answer to "why can't I use my coupon?" and what support should do."""

from django.utils.translation import gettext as _

from coupons.models import CaseStatus, CouponOperation, CouponStatus, OperationType
from coupons.services.payloads import iso
from coupons.services.transitions import is_past_validity


def coupon_diagnosis(coupon, now) -> dict:
    verdict, action = _verdict(coupon, now)
    cases = list(coupon.conflict_cases.filter(status=CaseStatus.OPEN).order_by("opened_at"))
    if cases:
        # Whole sentences joined by a space: each one is translated with its own placeholders.
        verdict += " " + " ".join(
            _("Conflict case #%(case)s is open for order %(order)s: %(summary)s")
            % {"case": case.pk, "order": case.order_id, "summary": case.summary}
            for case in cases
        )
        action = _("An operator must resolve conflict case #%(case)s (recommended: "
                   "%(recommendation)s).") % {
            "case": cases[0].pk, "recommendation": cases[0].recommendation} + " " + action
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
            return (_("Not usable yet: valid from %(start)s.") % {"start": iso(coupon.valid_from)},
                    _("Tell the customer when it starts."))
        if is_past_validity(coupon, now):
            return (_("Expired at %(end)s; the expiry scan has not marked it yet, and no order "
                      "can lock it.") % {"end": iso(coupon.valid_until)},
                    _("Nothing to repair: it will show EXPIRED after the next expiry scan."))
        usable = (_("Usable now until %(end)s.") % {"end": iso(coupon.valid_until)}
                  if coupon.valid_until else _("Usable now."))
        return (usable,
                _("If checkout refuses it, check the order amount against the minimum "
                  "(%(minimum)s) and the customer id.")
                % {"minimum": coupon.template_version.min_order_amount})
    if status == CouponStatus.LOCKED:
        lease_end = iso(coupon.lock_expires_at)
        order = coupon.locked_order_id
        if coupon.lock_expires_at and coupon.lock_expires_at <= now:
            return (_("Held by order %(order)s, whose lease ended at %(end)s; the lease scan "
                      "will release it unless that order was paid.")
                    % {"order": order, "end": lease_end},
                    _("Check order %(order)s: if it was abandoned, ask the order service to "
                      "close it, which releases the coupon at once.") % {"order": order})
        return (_("Locked by order %(order)s until %(end)s.") % {"order": order, "end": lease_end},
                _("It frees itself if order %(order)s is closed or its payment fails; "
                  "otherwise it is used when that order is paid.") % {"order": order})
    if status == CouponStatus.USED:
        redemption = coupon.redemptions.filter(succeeded=True).first()
        if redemption is None:
            return (_("USED without a redemption record."),
                    _("Escalate: ledger and redemptions disagree (possible ghost redemption)."))
        return (_("Used by order %(order)s (payment %(payment)s) at %(at)s.")
                % {"order": redemption.order_id, "payment": redemption.payment_id,
                   "at": iso(redemption.created_at)},
                _("If that order was refunded, the refund decision says whether it comes back."))
    if status == CouponStatus.EXPIRED:
        how = _last(coupon, OperationType.RELEASE)
        end = iso(coupon.valid_until)
        if how and how.to_state == CouponStatus.EXPIRED:
            verdict = (_("Expired at %(end)s. It was released from order %(order)s after its "
                         "validity ended.") % {"end": end, "order": how.order_id})
        else:
            verdict = _("Expired at %(end)s.") % {"end": end}
        return (verdict,
                _("It cannot be used again; a goodwill coupon is an operator's decision."))
    voided = _last(coupon, OperationType.VOID)
    reason = voided.reason if voided else ""
    when = iso(voided.created_at) if voided else ""
    if when and reason:
        verdict = _("Voided at %(at)s: %(reason)s.") % {"at": when, "reason": reason}
    elif when:
        verdict = _("Voided at %(at)s.") % {"at": when}
    else:
        verdict = _("Voided.")
    return (verdict, _("It cannot be used again."))

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils.translation import gettext_lazy as _

from coupons import clock
from coupons.errors import InvalidState, NotFound
from coupons.ledger_reasons import reason, reason_fields
from coupons.models import CouponStatus, CouponTemplateVersion, OperationType, UserCoupon
from coupons.write.records import append_operation, append_outbox
from coupons.write.refusals import refusals_recorded


@dataclass(frozen=True)
class IssueResult:
    coupon: UserCoupon

    def payload(self) -> dict:
        from coupons.selectors import coupon_payload

        return coupon_payload(self.coupon)


def coupon_issue(*, template_id, user_id: str, ctx) -> IssueResult:
    """Grant a coupon from the template's current version; it starts AVAILABLE at version 1."""
    with refusals_recorded(OperationType.ISSUE, ctx), transaction.atomic():
        result = IssueResult(issue_from_template(template_id=template_id, user_id=user_id,
                                                 ctx=ctx, now=clock.now()))
        return result


def issue_from_template(*, template_id, user_id: str, ctx, now, why=None) -> UserCoupon:
    """The ISSUE itself, inside the caller's transaction: the coupon, its ledger row and its
    outbox event. `why(terms)` words the row's reason (by default: the terms it was issued
    from)."""
    # The template's current terms with the template itself, in one read.
    terms = (CouponTemplateVersion.objects.select_related("template")
             .filter(template_id=template_id, version=F("template__version")).first())
    if terms is None:
        raise NotFound(_("No such template."), template_id=template_id)
    template = terms.template
    if not template.issuable:
        raise InvalidState(_("The campaign is closed: this template issues no more coupons."),
                           template_id=template.pk, current_state="CLOSED",
                           current_version=template.version)
    if terms.valid_days is not None:
        valid_from, valid_until = now, now + timedelta(days=terms.valid_days)
    else:
        valid_from, valid_until = terms.valid_from, terms.valid_until
    coupon = UserCoupon.objects.create(
        user_id=user_id, template=template, template_version=terms,
        status=CouponStatus.AVAILABLE, state_version=1,
        valid_from=valid_from, valid_until=valid_until, issued_at=now, updated_at=now,
    )
    operation = append_operation(
        coupon=coupon, op_type=OperationType.ISSUE, from_state="", from_version=0,
        ctx=ctx, now=now,
        **reason_fields(why(terms) if why else reason("issued_from", terms=str(terms))),
    )
    append_outbox(operation)
    return coupon

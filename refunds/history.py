"""After-sale's moments in a coupon's timeline: refund decisions received, decided and
reviewed, and compensations proposed and decided. The console's coupon page and the coupon API
(config/api_urls.py) pass SOURCES to coupons.history, which merges them with the core's."""

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from coupons.history import Source, entry, of
from coupons.ledger_reasons import reason_words
from coupons.redaction import visible
from coupons.write.payloads import money
from refunds.decision_reasons import decision_reason_words
from refunds.models import Compensation, RefundCoupon
from refunds.rule_labels import decided_rule, rule_words


def _compensation_proposed(c, can_see_details):
    return entry(c.created_at, "compensation", c.pk,
                 _("Compensation %(kind)s (%(status)s)") % {"kind": c.kind, "status": c.status},
                 proposed_by=c.created_by, operation_id=c.operation_id,
                 compensation_kind=c.kind, compensation_status=c.status,
                 **visible(Compensation, {
                     "order_id": c.order_id, "amount": money(c.amount), "reason": reason_words(c),
                 }, can_see_details=can_see_details))


def _compensation_decided(c, can_see_details):
    shown = visible(Compensation, {"decision_note": c.decision_note},
                    can_see_details=can_see_details)
    title = (_("Compensation #%(id)s rejected") if c.status == Compensation.Status.REJECTED
             else _("Compensation #%(id)s approved")) % {"id": c.pk}
    return entry(c.decided_at, "compensation", c.pk, title,
                 decided_by=c.decided_by, note=shown.get("decision_note"),
                 operation_id=c.resulting_operation_id)


def _refund_received(d, can_see_details):
    return entry(d.received_at, "refund", d.pk,
                 _("Refund %(refund)s received (%(type)s, %(amount)s)")
                 % {"refund": d.refund_id, "type": d.refund_type, "amount": d.refund_amount},
                 order_id=d.order_id, refund_id=d.refund_id, actor=d.created_by,
                 refund_type=d.refund_type, refund_amount=money(d.refund_amount))


def _refund_decided(d, can_see_details):
    version = d.policy_version
    return entry(
        d.decided_at, "refund", d.pk,
        (_("Refund decision: %(action)s, for an operator") if d.requires_approval
         else _("Refund decision: %(action)s")) % {"action": d.action},
        refund_id=d.refund_id, coupon_share=money(d.coupon_share),
        policy=f"{version.policy.code} v{version.number}" if version else None,
        rule=rule_words(decided_rule(d)), reason=decision_reason_words(d),
        reason_code=d.reason_code, action=d.action, requires_approval=d.requires_approval,
    )


def _refund_reviewed(d, can_see_details):
    title = (_("Refund decision rejected: %(action)s")
             if d.status == RefundCoupon.Status.REJECTED
             else _("Refund decision approved: %(action)s"))
    return entry(d.reviewed_at, "review", d.pk,
                 title % {"action": d.executed_action or d.action},
                 refund_id=d.refund_id, reviewed_by=d.reviewed_by, note=d.review_note,
                 action=d.executed_action or d.action, decision_status=d.status)


def _refunds_of(coupon) -> QuerySet:
    return RefundCoupon.objects.filter(of(coupon))


def _compensations_of(coupon) -> QuerySet:
    return Compensation.objects.filter(of(coupon))


def _refunds_read(coupon) -> QuerySet:
    # A decision's entry names the policy version that decided it.
    return _refunds_of(coupon).select_related("policy_version__policy")


# A page reads the rows of a table once, whichever of its moments the page shows: the sources
# of a table share their `read`.
SOURCES = [
    Source("compensation", 0, "created_at", _compensations_of, _compensation_proposed,
           read=_compensations_of),
    Source("compensation", 1, "decided_at",
           lambda c: _compensations_of(c).filter(decided_at__isnull=False),
           _compensation_decided, read=_compensations_of),
    Source("refund", 0, "received_at", _refunds_of, _refund_received, read=_refunds_read),
    Source("refund", 1, "decided_at",
           lambda c: _refunds_of(c).filter(decided_at__isnull=False), _refund_decided,
           read=_refunds_read),
    Source("review", 0, "reviewed_at",
           lambda c: _refunds_of(c).filter(reviewed_at__isnull=False), _refund_reviewed,
           read=_refunds_read),
]

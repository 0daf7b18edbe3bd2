"""One coupon's history from every source, merged into one time-ordered list for support.

Sources: the ledger, the rejection log, the order facts of every order that held the coupon,
conflict cases, presale settlements, compensations and refund decisions (received, decided,
approved or rejected; the RETURN they executed is a ledger entry). Ties at one instant keep a
fixed order (a fact before the commands it caused, a command before what it led to) and then
the row id.
"""

from coupons.models import (
    CommandRejection,
    ConflictCase,
    CouponOperation,
    OrderCoupon,
    OrderFact,
    PresaleSettlement,
)
from coupons.redaction import visible
from coupons.services.payloads import iso, money
from refunds.models import Compensation, RefundCoupon

# A refund is received, decided and (when it waits for one) reviewed before the RETURN it
# executes at the same instant.
KIND_ORDER = ["fact", "refund", "review", "operation", "refusal", "case", "settlement",
              "compensation"]


def entry(at, kind, pk, title, **details) -> dict:
    return {"at": at, "kind": kind, "id": pk, "title": title,
            "details": {k: v for k, v in details.items() if v not in ("", None)}}


def coupon_timeline(*, coupon, can_see_details: bool) -> list[dict]:
    """`can_see_details`: whether the reader may see case notes and compensation amounts."""
    order_ids = set(OrderCoupon.objects.filter(coupon=coupon).values_list("order_id", flat=True))
    entries = [
        entry(op.created_at, "operation", op.pk,
              f"{op.op_type} {op.from_state or '∅'}→{op.to_state} (v{op.to_version})",
              actor=op.actor, order_id=op.order_id, payment_id=op.payment_id,
              lock_id=str(op.lock_id) if op.lock_id else None, reason=op.reason)
        for op in CouponOperation.objects.filter(coupon=coupon)
    ]
    entries += [
        entry(r.created_at, "refusal", r.pk, f"{r.op_type} refused: {r.error_code}",
              actor=r.actor, order_id=r.order_id, message=r.message)
        for r in CommandRejection.objects.filter(coupon_id_ref=coupon.pk)
    ]
    entries += [
        entry(f.recorded_at, "fact", f.pk, f"{f.fact_type} for order {f.order_id}",
              order_id=f.order_id, payment_id=f.payment_id, refund_id=f.refund_id,
              occurred_at=iso(f.occurred_at))
        for f in OrderFact.objects.filter(order_id__in=order_ids)
    ]
    for case in ConflictCase.objects.filter(coupon=coupon):
        entries.append(entry(case.opened_at, "case", case.pk,
                             f"Conflict case #{case.pk} opened: {case.recommendation}",
                             order_id=case.order_id, summary=case.summary))
        if case.resolved_at:
            entries.append(entry(case.resolved_at, "case", case.pk,
                                 f"Conflict case #{case.pk} {case.status.lower()}",
                                 **visible(ConflictCase, {
                                     "resolved_by": case.resolved_by,
                                     "resolution_note": case.resolution_note,
                                 }, can_see_details=can_see_details)))
    entries += [
        entry(s.settled_at, "settlement", s.pk, f"Presale order {s.order_id}: {s.result}",
              strategy=s.strategy, discount_amount=money(s.discount_amount),
              substitute_coupon_id=s.substitute_id)
        for s in PresaleSettlement.objects.filter(coupon=coupon)
    ]
    for c in Compensation.objects.filter(coupon=coupon):
        entries.append(entry(c.created_at, "compensation", c.pk,
                             f"Compensation {c.kind} ({c.status})",
                             proposed_by=c.created_by, operation_id=c.operation_id,
                             **visible(Compensation, {
                                 "order_id": c.order_id, "amount": money(c.amount),
                                 "reason": c.reason,
                             }, can_see_details=can_see_details)))
        if c.decided_at:
            entries.append(entry(c.decided_at, "compensation", c.pk,
                                 f"Compensation #{c.pk} {c.status.lower()}",
                                 decided_by=c.decided_by, note=c.decision_note,
                                 operation_id=c.resulting_operation_id))
    entries += refund_entries(coupon)
    entries.sort(key=lambda e: (e["at"], KIND_ORDER.index(e["kind"]), e["id"]))
    return [{**e, "at": iso(e["at"])} for e in entries]


def refund_entries(coupon) -> list[dict]:
    entries = []
    for d in RefundCoupon.objects.filter(coupon=coupon).select_related("policy_version__policy"):
        entries.append(entry(d.received_at, "refund", d.pk,
                             f"Refund {d.refund_id} received ({d.refund_type}, {d.refund_amount})",
                             order_id=d.order_id, refund_id=d.refund_id, actor=d.created_by))
        if d.decided_at:
            version = d.policy_version
            entries.append(entry(
                d.decided_at, "refund", d.pk,
                f"Refund decision: {d.action}"
                + (", for an operator" if d.requires_approval else ""),
                refund_id=d.refund_id, coupon_share=money(d.coupon_share),
                policy=f"{version.policy.code} v{version.number}" if version else None,
                rule=d.rule_label, reason=d.reason,
            ))
        if d.reviewed_at:
            verdict = "rejected" if d.status == RefundCoupon.Status.REJECTED else "approved"
            entries.append(entry(d.reviewed_at, "review", d.pk,
                                 f"Refund decision {verdict}: {d.executed_action or d.action}",
                                 refund_id=d.refund_id, reviewed_by=d.reviewed_by,
                                 note=d.review_note))
    return entries

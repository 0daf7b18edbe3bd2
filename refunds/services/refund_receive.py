"""A refund reaching the coupon service (POST refunds, or the RefundSucceeded fact).

Two separate decisions per coupon the order redeemed, each with its evidence:

* money: the coupon's share of the refund. The order's discount snapshot (OrderCoupon, frozen
  at LOCK; never the template's face value) is pro-rated by how much of what the order paid
  has been refunded so far: share_so_far = round(discount × min(1, refunded_total / paid)),
  and this refund's share is share_so_far minus the shares earlier refunds of the order already
  took. The shares of an order's refunds add up to its discount exactly once it is refunded in
  full, whatever the rounding.
* coupon: what the coupon's return policy version (published at the refund's time) says, from
  the RefundFacts stored with the decision.

Refund type is cumulative: a PARTIAL refund that brings the order's refunds up to what it paid
counts as FULL.
"""

from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal

from django.db import transaction

from coupons import clock
from coupons.errors import CouponError, RefundIdReused
from coupons.evidence.journal import fold_problem, with_journal
from coupons.ledger_reasons import reason as ledger_reason
from coupons.models import (
    CouponOperation,
    CouponStatus,
    FactType,
    OrderCoupon,
    OrderFact,
    Redemption,
)
from coupons.services.release import coupon_release
from coupons.write.context import LeaseProof
from coupons.write.declared import declared_insert
from coupons.write.payloads import money
from coupons.write.rows import lock_coupon_row
from coupons.write.transitions import is_past_validity
from refunds.decision_reasons import decision_reason
from refunds.models import RefundCoupon
from refunds.policy_engine import RefundFacts, RefundType, decide, policy_version_for
from refunds.services.refund_execute import Action, Status, decision_finish, decision_move

CENT = Decimal("0.01")
SHARE_PLACES = Decimal("0.0001")
PAYMENT_FACTS = (FactType.PAYMENT_SUCCEEDED, FactType.FINAL_PAYMENT_SUCCEEDED)


@dataclass(frozen=True)
class RefundReceipt:
    refund_id: str
    order_id: str
    decisions: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def payload(self) -> dict:
        from refunds.selectors import decision_payload

        return {"refund_id": self.refund_id, "order_id": self.order_id,
                "decisions": [decision_payload(d) for d in self.decisions],
                "notes": self.notes}


def refund_receive(
    *, refund_id: str, order_id: str, payment_id: str, refund_amount: Decimal,
    refund_type: str, ctx, risk_flag: bool = False,
) -> RefundReceipt:
    """One decision per coupon of the order; the same refund again answers the same decisions.

    Lock order: the order's coupon rows (ascending id), then refund records. Every refund of
    the order and every redeem of its coupons queue on those rows, so the same refund sent by
    API and by fact at once decides once, and refunds of one order add up one at a time.
    """
    with transaction.atomic():
        coupon_ids = sorted(set(
            OrderCoupon.objects.filter(order_id=order_id).values_list("coupon_id", flat=True)
        ))
        decisions, notes = [], []
        for coupon_id in coupon_ids:
            coupon = lock_coupon_row(coupon_id)
            existing = RefundCoupon.objects.filter(refund_id=refund_id, coupon=coupon).first()
            if existing is not None:
                if (existing.order_id, existing.refund_amount) != (order_id, refund_amount):
                    raise RefundIdReused(
                        refund_id=refund_id, order_id=existing.order_id,
                        refund_amount=money(existing.refund_amount),
                    )
                decisions.append(existing)
                continue
            decision, note = _receive_for_coupon(
                coupon, refund_id=refund_id, order_id=order_id, payment_id=payment_id,
                refund_amount=refund_amount, refund_type=refund_type, risk_flag=risk_flag,
                ctx=ctx,
            )
            if decision is not None:
                decisions.append(decision)
            if note:
                notes.append({"coupon_id": coupon.pk, "note": note})
        if not coupon_ids:
            notes.append({"coupon_id": None, "note": "The order used no coupon."})
        return RefundReceipt(refund_id, order_id, decisions, notes)


def _receive_for_coupon(coupon, *, refund_id, order_id, refund_amount, ctx, **refund):
    now = clock.now()
    redemption = coupon.redemptions.filter(order_id=order_id, succeeded=True).first()
    held = coupon.status == CouponStatus.LOCKED and coupon.locked_order_id == order_id
    if redemption is None and not held:
        return None, (f"The coupon is {coupon.status} and not redeemed by this order: "
                      "nothing to decide.")
    decision = RefundCoupon(
        refund_id=refund_id, order_id=order_id, coupon=coupon, refund_amount=refund_amount,
        status=Status.AWAITING_REDEMPTION, created_by=ctx.actor, received_at=now, **refund,
    )
    declared_insert(decision, kind="received", actor=ctx.actor)
    if redemption is not None:
        return refund_decide(decision, ctx=ctx), ""
    if _deposit_only(order_id):
        return _release_deposit_lock(decision, coupon, ctx=ctx, now=now), ""
    return decision_move(decision, from_status=Status.AWAITING_REDEMPTION, actor=ctx.actor,
                         now=now, **decision_reason("awaiting_redemption")), ""


def _deposit_only(order_id: str) -> bool:
    """A presale order with its deposit paid and no final payment: the refund is the deposit."""
    facts = OrderFact.objects.filter(order_id=order_id)
    return (facts.filter(fact_type=FactType.DEPOSIT_PAID).exists()
            and not facts.filter(fact_type__in=PAYMENT_FACTS).exists())


def _release_deposit_lock(decision, coupon, *, ctx, now) -> RefundCoupon:
    """A refunded deposit frees its coupon at once, not at the lease's end."""
    reason = ledger_reason("deposit_refunded", order=decision.order_id,
                           refund=decision.refund_id)
    result = coupon_release(
        coupon_id=coupon.pk, reason=reason, ctx=replace(ctx, idempotency_record_id=None),
        lease=LeaseProof.from_lock(coupon.current_lock, expected_version=coupon.state_version),
    )
    binding = coupon.current_lock.order_coupon
    return decision_move(
        decision, from_status=Status.AWAITING_REDEMPTION, actor=ctx.actor, now=now,
        status=Status.EXECUTED,
        action=Action.RELEASE_LOCK, executed_action=Action.RELEASE_LOCK, decided_at=now,
        order_amount=binding.order_amount, order_discount=binding.discount_amount,
        coupon_share=Decimal("0.00"),
        operation=CouponOperation.objects.get(coupon=coupon, to_version=result.state_version),
        **decision_reason("deposit_lease_ended", order=decision.order_id,
                          refund=decision.refund_id, state=result.status),
    )


def refunds_awaiting_redemption(*, coupon, redemption, ctx) -> None:
    """The redeem hook: refunds that arrived before this redemption are decided now.

    Runs in the redeem's transaction, holding the coupon row.
    """
    waiting = with_journal(RefundCoupon.objects.filter(
        coupon=coupon, order_id=redemption.order_id, status=Status.AWAITING_REDEMPTION
    )).order_by("pk")
    for decision in waiting:
        # What the refund service sent (amount, type, risk flag) is decided on only as the
        # journal received it. A decision changed past the services is left waiting (the
        # coupon's check names it) rather than refusing the payment's redeem.
        if fold_problem(decision) is None:
            refund_decide(decision, ctx=ctx)


def refund_decide(decision: RefundCoupon, *, ctx) -> RefundCoupon:
    """Take both decisions for an AWAITING_REDEMPTION record, then execute what needs no one."""
    now = clock.now()
    coupon = lock_coupon_row(decision.coupon_id)
    redemption = coupon.redemptions.select_related("lock__order_coupon").get(
        order_id=decision.order_id, succeeded=True
    )
    decision.redemption = redemption
    evidence = money_decision(decision, redemption)
    terms = coupon.template_version
    facts = RefundFacts(
        refund_type=(RefundType.FULL if decision.refund_type == RefundType.FULL
                     or evidence["refunded_total"] >= evidence["paid_amount"]
                     else RefundType.PARTIAL),
        refunded_share=evidence.pop("refunded_share"),
        coupon_expired=is_past_validity(coupon, now),
        template_kind=terms.kind,
        template_returnable=terms.returnable,
        campaign_closed=not coupon.template.issuable,
        risk_flag=decision.risk_flag,
        days_since_redemption=max(0, (decision.received_at - redemption.created_at).days),
        face_value=terms.face_value,
    )
    version = policy_version_for(terms, decision.received_at)
    verdict = decide(version, facts)
    decided = {
        "redemption": redemption, "facts": facts.as_json(), "policy_version": version,
        "action": verdict.action, "rule_index": verdict.rule_index,
        "rule_label": verdict.rule_label[:200], "requires_approval": verdict.requires_approval,
        "compensation": verdict.compensation or {}, "decided_at": now, **evidence,
    }
    if verdict.action == Action.MANUAL_REVIEW or verdict.requires_approval:
        return decision_move(decision, from_status=Status.AWAITING_REDEMPTION,
                             actor=ctx.actor, now=now, status=Status.PENDING_APPROVAL,
                             **decision_reason("operator_decides"), **decided)
    for name, value in decided.items():
        setattr(decision, name, value)
    try:
        # No savepoint of our own: a refused command rolls back its own, and its refusal log
        # entry must stay.
        return decision_finish(decision, from_status=Status.AWAITING_REDEMPTION,
                               execute=verdict.action, coupon=coupon, ctx=ctx, now=now,
                               **decided)
    except CouponError as error:  # the coupon moved on (voided, reversed): a person decides
        return decision_move(
            decision, from_status=Status.AWAITING_REDEMPTION, actor=ctx.actor, now=now,
            status=Status.PENDING_APPROVAL,
            **decision_reason("refused_operator_decides", action=verdict.action,
                              code=error.code),
            **decided,
        )


def money_decision(decision: RefundCoupon, redemption: Redemption) -> dict:
    """The money decision and its evidence (see the module docstring for the pro-rating)."""
    binding = redemption.lock.order_coupon
    # The discount each coupon gave the order at payment (its latest redemption for the order:
    # a coupon returned and redeemed again by the same order counts once).
    per_coupon = dict(
        Redemption.objects.filter(order_id=decision.order_id)
        .order_by("coupon_id", "created_at", "id").values_list("coupon_id", "discount_amount")
    )
    paid = max(binding.order_amount - sum(per_coupon.values(), Decimal(0)), Decimal(0))
    earlier = RefundCoupon.objects.filter(order_id=decision.order_id, pk__lt=decision.pk)
    earlier_refunds = dict(
        earlier.exclude(refund_id=decision.refund_id).values_list("refund_id", "refund_amount")
    )
    refunded_total = sum(earlier_refunds.values(), Decimal(0)) + decision.refund_amount
    share = Decimal(1) if paid == 0 else min(Decimal(1), refunded_total / paid)
    share_so_far = (binding.discount_amount * share).quantize(CENT, rounding=ROUND_HALF_UP)
    taken = sum(
        earlier.filter(coupon_id=decision.coupon_id, coupon_share__isnull=False)
        .values_list("coupon_share", flat=True),
        Decimal(0),
    )
    return {
        "order_amount": binding.order_amount, "order_discount": binding.discount_amount,
        "paid_amount": paid, "refunded_total": refunded_total,
        "coupon_share": max(share_so_far - taken, Decimal(0)),
        "refunded_share": share.quantize(SHARE_PLACES, rounding=ROUND_HALF_UP),
    }

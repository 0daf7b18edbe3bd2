"""One handler per fact. Each proves ownership with the order's stored lease and never forces
a state: a command the coupon refuses becomes a conflict case or a recorded no-op. A coupon
whose row another transaction holds (CouponBusy) refuses nothing: the whole message rolls back
and is retried (409 over HTTP, put back on the queue by the consumer)."""

from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.utils.dateparse import parse_datetime

from coupons import after_sale
from coupons.errors import CouponBusy, CouponError, StateConflict
from coupons.events.facts import order_binding, order_payment, stored_lease
from coupons.events.presale import settle_final_payment
from coupons.ledger_reasons import reason
from coupons.models import CaseStatus, FactType, LockStatus, OrderFact, UserCoupon
from coupons.services import (
    CommandContext,
    coupon_lock,
    coupon_redeem,
    coupon_release,
    coupon_renew,
)
from coupons.services.cases import case_open
from coupons.services.presale_cases import deposit_claim, presale_case_join, presale_case_open

COORDINATOR = CommandContext(actor="system:coordinator")

# Every `action` an outcome can name (the handlers below, coupons.events.presale and
# coupons.services.customers), so the API's schema can state them as an enum; tests/contract
# checks the handlers name no other.
OUTCOME_ACTIONS = (
    "ALREADY_LOCKED", "ALREADY_REDEEMED", "ALREADY_SETTLED", "CASE_ALREADY_CLOSED",
    "CASE_OPENED", "COMPENSATED", "IGNORED", "LEASE_EXTENDED", "LOCKED", "LOCK_REFUSED",
    "NOTHING_TO_RELEASE", "NO_COUPON", "NO_COUPON_DECISION", "PAID_IN_FULL",
    "PROFILE_OUTDATED", "PROFILE_UNCHANGED", "PROFILE_UPDATED", "REDEEMED", "REFUND_DECIDED",
    "REFUND_REFUSED", "REFUSED", "RELEASED", "SUBSTITUTED",
)


def refused(error: CouponError) -> dict:
    return {"error_code": error.code, "error_details": error.details}


def open_case_for(fact: OrderFact, binding, error: CouponError) -> dict:
    coupon = binding.coupon
    coupon.refresh_from_db()
    case = case_open(
        coupon=coupon, order_id=fact.order_id, fact_type=fact.fact_type,
        payment_id=fact.payment_id,
        evidence={
            "refused_with": error.code,
            "coupon_state": coupon.status,
            "coupon_version": coupon.state_version,
            "order_lock_id": str(binding.lock_id),
            "order_discount": f"{binding.discount_amount:.2f}",
            "payment_id": fact.payment_id,
            "message_id": fact.first_message.message_id,
        },
    )
    action = "CASE_OPENED" if case.status == CaseStatus.OPEN else "CASE_ALREADY_CLOSED"
    return {"action": action, "coupon_id": coupon.pk, "case_id": case.pk,
            "recommendation": case.recommendation, **refused(error)}


def on_payment_succeeded(fact: OrderFact) -> dict:
    binding = order_binding(fact.order_id)
    if binding is None:
        return {"action": "NO_COUPON"}
    try:
        result = coupon_redeem(
            coupon_id=binding.coupon_id, lease=stored_lease(binding.lock),
            payment_id=fact.payment_id, ctx=COORDINATOR,
        )
    except CouponBusy:
        raise  # the coupon's row is held: the fact waits for its retry, nothing is decided
    except CouponError as error:  # a late payment: the lease moved on to another order
        return open_case_for(fact, binding, error)
    return {"action": "ALREADY_REDEEMED" if result.already_redeemed else "REDEEMED",
            "coupon_id": binding.coupon_id, "redemption_id": result.redemption.pk,
            "state_version": result.state_version}


def on_order_ended(fact: OrderFact) -> dict:
    """PaymentFailed and OrderClosed: give the coupon back, unless the order was paid."""
    binding = order_binding(fact.order_id)
    if binding is None:
        return {"action": "NO_COUPON"}
    if order_payment(fact.order_id) is not None:
        return {"action": "IGNORED", "coupon_id": binding.coupon_id,
                "reason": "the order has a successful payment; its coupon stays with it"}
    if fact.fact_type == FactType.PAYMENT_FAILED and has_fact(fact.order_id, FactType.DEPOSIT_PAID):
        # A declined final-payment card may be retried until the deadline; the deposit keeps
        # the coupon until the order closes or the lease (deadline + grace) ends.
        return {"action": "IGNORED", "coupon_id": binding.coupon_id,
                "reason": "a presale order keeps its coupon until it closes or its lease ends"}
    if binding.lock.status != LockStatus.ACTIVE:
        return {"action": "NOTHING_TO_RELEASE", "coupon_id": binding.coupon_id,
                "lock_status": binding.lock.status}
    try:
        result = coupon_release(
            coupon_id=binding.coupon_id, lease=stored_lease(binding.lock), ctx=COORDINATOR,
            reason=reason("order_ended", fact=fact.fact_type, order=fact.order_id),
        )
    except StateConflict as error:  # lost a race with another command; nothing to force
        return {"action": "REFUSED", "coupon_id": binding.coupon_id, **refused(error)}
    return {"action": "RELEASED", "coupon_id": binding.coupon_id, "status": result.status,
            "state_version": result.state_version}


def on_deposit_paid(fact: OrderFact) -> dict:
    """Presale: lock the coupon at deposit, with a lease past the final-payment deadline."""
    payload = fact.payload
    if has_fact(fact.order_id, FactType.ORDER_CLOSED):
        # A redelivered (or reordered) deposit of a closed order must not lock the coupon
        # again: nothing would ever pay for it, and it would stay locked until deadline + grace.
        return {"action": "IGNORED", "coupon_id": payload["coupon_id"],
                "reason": "the order was closed; its deposit no longer holds a coupon"}
    grace = timedelta(seconds=settings.COUPONS["PRESALE_GRACE_SECONDS"])
    lease_until = parse_datetime(payload["final_payment_deadline"]) + grace
    binding = order_binding(fact.order_id)
    if binding is not None and binding.lock.status == LockStatus.ACTIVE:
        return extend_to_deadline(binding, lease_until)
    try:
        result = coupon_lock(
            coupon_id=payload["coupon_id"], order_id=fact.order_id, user_id=payload["user_id"],
            order_amount=Decimal(payload["order_amount"]), quote_id=payload.get("quote_id", ""),
            lease_until=lease_until, ctx=COORDINATOR,
        )
    except CouponBusy:
        raise  # the coupon's row is held: the fact waits for its retry, nothing is decided
    except CouponError as error:
        return deposit_refused(fact, error)
    return {"action": "LOCKED", "coupon_id": result.lock.coupon_id,
            "lock_id": str(result.lock.pk), "state_version": result.state_version,
            "expires_at": result.payload()["expires_at"]}


def deposit_refused(fact: OrderFact, error: CouponError) -> dict:
    """The order service charged a deposit counting on the coupon, which said no: a case names
    the order, the coupon and why (coupons/services/presale_cases.py). A coupon that does not
    exist has nothing to hold a case: the refusal is the whole answer."""
    coupon = UserCoupon.objects.filter(pk=fact.payload["coupon_id"]).first()
    if coupon is None:
        return {"action": "LOCK_REFUSED", "coupon_id": fact.payload["coupon_id"],
                **refused(error)}
    return case_outcome(presale_case_open(coupon=coupon, claim=fact, error=error))


def case_outcome(case) -> dict:
    action = "CASE_OPENED" if case.status == CaseStatus.OPEN else "CASE_ALREADY_CLOSED"
    return {"action": action, "coupon_id": case.coupon_id, "case_id": case.pk,
            "recommendation": case.recommendation,
            "error_code": case.evidence.get("refused_with", ""),
            "error_details": case.evidence.get("error_details", {})}


def unbound_final_payment(fact: OrderFact) -> dict:
    """No binding: the order's claim is its deposit, if one named a coupon of ours."""
    claim = deposit_claim(fact.order_id)
    coupon = claim and UserCoupon.objects.filter(pk=claim.payload["coupon_id"]).first()
    if coupon is None:
        return {"action": "NO_COUPON"}
    return case_outcome(presale_case_join(coupon=coupon, claim=claim, payment=fact))


def extend_to_deadline(binding, lease_until) -> dict:
    """The order locked at checkout (a short quote lease): the deposit stretches it."""
    outcome = {"action": "ALREADY_LOCKED", "coupon_id": binding.coupon_id}
    if binding.lock.expires_at >= lease_until:
        return outcome
    try:
        renewed = coupon_renew(coupon_id=binding.coupon_id, lease=stored_lease(binding.lock),
                               lease_until=lease_until, ctx=COORDINATOR)
    except CouponBusy:
        raise  # the coupon's row is held: the fact waits for its retry, nothing is decided
    except CouponError as error:
        return {**outcome, **refused(error)}
    return {**outcome, "action": "LEASE_EXTENDED", "expires_at": renewed.payload()["expires_at"],
            "state_version": renewed.state_version}


def has_fact(order_id: str, fact_type: str) -> bool:
    return OrderFact.objects.filter(order_id=order_id, fact_type=fact_type).exists()


def on_final_payment(fact: OrderFact) -> dict:
    binding = order_binding(fact.order_id)
    if binding is None:
        return unbound_final_payment(fact)
    try:
        return settle_final_payment(fact, binding, COORDINATOR)
    except StateConflict as error:
        return open_case_for(fact, binding, error)


def on_refund_succeeded(fact: OrderFact) -> dict:
    """The same service as POST refunds: a refund sent both ways decides once."""
    payload = fact.payload
    try:
        receipt = after_sale.receive_refund(
            refund_id=payload["refund_id"], order_id=fact.order_id,
            payment_id=payload["payment_id"], refund_amount=Decimal(payload["refund_amount"]),
            refund_type=payload["refund_type"], risk_flag=bool(payload.get("risk_flag", False)),
            ctx=COORDINATOR,
        )
    except CouponBusy:
        raise  # the coupon's row is held: the fact waits for its retry, nothing is decided
    except CouponError as error:  # the refund id was already received for another order
        return {"action": "REFUND_REFUSED", **refused(error)}
    if not receipt.decisions:
        return {"action": "NO_COUPON_DECISION", "notes": receipt.notes}
    return {"action": "REFUND_DECIDED",
            "decisions": [{"id": d.pk, "coupon_id": d.coupon_id, "action": d.action,
                           "status": d.status} for d in receipt.decisions]}


HANDLERS = {
    FactType.PAYMENT_SUCCEEDED: on_payment_succeeded,
    FactType.PAYMENT_FAILED: on_order_ended,
    FactType.ORDER_CLOSED: on_order_ended,
    FactType.DEPOSIT_PAID: on_deposit_paid,
    FactType.FINAL_PAYMENT_SUCCEEDED: on_final_payment,
    FactType.REFUND_SUCCEEDED: on_refund_succeeded,
}

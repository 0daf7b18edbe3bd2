"""Queue items made through the services, as production makes them: a conflict case from a
late payment, a refund decision waiting for approval, a compensation proposal."""

from decimal import Decimal

from coupons.models import OperationType
from coupons.services import CommandContext, coupon_issue, coupon_redeem, coupon_release
from coupons.services.cases import case_open
from refunds.services import refund_receive
from refunds.services.compensation_propose import compensation_propose
from tests.conftest import lock

SYSTEM = CommandContext(actor="test")


def fresh_coupon(template, user_id="u1"):
    return coupon_issue(template_id=template.pk, user_id=user_id, ctx=SYSTEM).coupon


def late_payment_case(coupon, order_id="order-A"):
    """Order A locked the coupon, closed (released), then its payment arrived: an open case
    recommending a compensating redeem (the coupon is free again)."""
    _, proof = lock(coupon, SYSTEM, order_id=order_id)
    coupon_release(coupon_id=coupon.pk, lease=proof, reason="order closed", ctx=SYSTEM)
    coupon.refresh_from_db()
    return case_open(coupon=coupon, order_id=order_id, fact_type="PaymentSucceeded",
                     payment_id=f"pay-{order_id}",
                     evidence={"coupon_state": coupon.status, "refused_with": "INVALID_STATE"})


def redeemed(coupon, order_id="order-R"):
    _, proof = lock(coupon, SYSTEM, order_id=order_id)
    coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id=f"pay-{order_id}", ctx=SYSTEM)
    return coupon.operations.get(op_type=OperationType.REDEEM)


def pending_decision(coupon, order_id="order-R"):
    """A full refund of a redeemed order, risk-flagged: the default policy sends it to an
    operator as MANUAL_REVIEW."""
    redeemed(coupon, order_id)
    [decision] = refund_receive(
        refund_id=f"refund-{order_id}", order_id=order_id, payment_id=f"pay-{order_id}",
        refund_amount=Decimal("270.00"), refund_type="FULL", risk_flag=True, ctx=SYSTEM,
    ).decisions
    return decision


def proposal(coupon, proposer="user:alice", order_id="order-C", amount=None):
    """A proposal by `proposer` to reverse (or, with an amount, pay for) the coupon's REDEEM."""
    operation = redeemed(coupon, order_id)
    return compensation_propose(coupon_id=coupon.pk, operation_id=operation.pk,
                                reason="redeemed by mistake", amount=amount,
                                ctx=CommandContext(actor=proposer))

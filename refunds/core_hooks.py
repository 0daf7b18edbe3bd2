"""After-sale's answers to the coupon core's hooks (coupons/after_sale.py), installed when
Django starts (RefundsConfig.ready): the core calls them and never imports this package."""

from functools import partial

from coupons import after_sale, sentences
from refunds.models import Compensation, RefundCoupon
from refunds.replay_checks import check_returns
from refunds.rule_labels import label_words
from refunds.services import refund_receive
from refunds.services.compensation_record import compensation_record
from refunds.services.policies import return_policy_named
from refunds.services.refund_receive import refunds_awaiting_redemption


def awaiting_redemption_sql(coupon: str) -> tuple[str, list]:
    table = RefundCoupon._meta.db_table
    return (f"EXISTS (SELECT 1 FROM {table} r WHERE r.coupon_id = {coupon}.id"  # noqa: S608
            f" AND r.order_id = {coupon}.locked_order_id AND r.status = %s)",
            [RefundCoupon.Status.AWAITING_REDEMPTION])


def _owe(kind, *, order_id, coupon, amount, reason, actor) -> None:
    compensation_record(kind=kind, order_id=order_id, coupon=coupon, amount=amount,
                        reason=reason, actor=actor)


def install() -> None:
    after_sale.install(
        decide_refunds_awaiting_redemption=refunds_awaiting_redemption,
        awaiting_redemption_sql=awaiting_redemption_sql,
        receive_refund=refund_receive,
        owe_order_discount=partial(_owe, Compensation.Kind.ORDER_DISCOUNT_REFUND),
        owe_presale_discount=partial(_owe, Compensation.Kind.PRESALE_EXPIRED_COUPON),
        return_policy_named=return_policy_named,
        check_returns=check_returns,
    )
    # A ledger reason that names the rule of a refund decision (refunds/services/refund_execute.py).
    sentences.VALUE_WORDS["rule"] = label_words

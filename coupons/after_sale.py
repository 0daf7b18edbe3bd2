"""The narrow hook through which the coupon core reaches after-sale (refunds/).

After-sale sits on top of the core: it reads coupons and changes them only through the core's
transition function. The core never imports refunds/, except here
(tests/architecture/test_layout.py keeps it so). A few moments of a coupon's own life need
after-sale's answer; each is one function below, importing refunds when it is called, so the core
loads and is read without it.
"""


def decide_refunds_awaiting_redemption(*, coupon, redemption, ctx) -> None:
    """The redeem hook: a refund that came before its order's redemption is decided now, in the
    redeem's transaction (coupons.services.redeem)."""
    from refunds.services.refund_receive import refunds_awaiting_redemption

    refunds_awaiting_redemption(coupon=coupon, redemption=redemption, ctx=ctx)


def receive_refund(**refund):
    """A RefundSucceeded fact is the same refund as POST refunds (coupons.events.handlers)."""
    from refunds.services import refund_receive

    return refund_receive(**refund)


def owe_order_discount(*, order_id, coupon, amount, reason, actor) -> None:
    """A conflict case resolved by refunding the order's discount (coupons.services.cases)."""
    from refunds.models import Compensation
    from refunds.services.compensation_record import compensation_record

    compensation_record(kind=Compensation.Kind.ORDER_DISCOUNT_REFUND, order_id=order_id,
                        coupon=coupon, amount=amount, reason=reason, actor=actor)


def owe_presale_discount(*, order_id, coupon, amount, reason, actor) -> None:
    """A presale coupon lapsed before final payment and no substitute fits
    (coupons.events.presale)."""
    from refunds.models import Compensation
    from refunds.services.compensation_record import compensation_record

    compensation_record(kind=Compensation.Kind.PRESALE_EXPIRED_COUPON, order_id=order_id,
                        coupon=coupon, amount=amount, reason=reason, actor=actor)


def return_policy_named(value):
    """The return policy a template names by id or code (coupons.services.templates)."""
    from refunds.services.policies import return_policy_named

    return return_policy_named(value)


def check_returns(report, coupon, operations) -> None:
    """Invariant 6 beyond the ledger: each RETURN names its refund decision
    (coupons.evidence.replay)."""
    from refunds.replay_checks import check_returns

    check_returns(report, coupon, operations)


def broken_seals(coupon, *, after: dict, newest: dict | None) -> tuple[list[str], dict]:
    """The coupon's refund decisions and compensations (those after the ids in `after`) whose
    seals fail, and how far they were read (coupons.evidence.replay)."""
    from refunds.replay_checks import broken_seals

    return broken_seals(coupon, after, newest)


def newest_row_sql(coupon_column: str) -> dict[str, str]:
    """SQL for the newest id of the coupon's refund decisions and compensations, for the check
    to see without a query of its own whether any came after its watermark."""
    from refunds.replay_checks import newest_row_sql

    return newest_row_sql(coupon_column)


def timeline_sources() -> list:
    """Refund decisions and compensations in a coupon's timeline (coupons.history)."""
    from refunds.history import SOURCES

    return SOURCES


def awaiting_redemption_sql(coupon: str) -> tuple[str, list]:
    """SQL true when refunds of the coupon's leasing order wait for its redemption; `coupon`
    is the alias of the coupon row in the caller's statement (rows.lock_coupon_row reads the
    flag with the row lock, so a redeem without such refunds spends no statement on them)."""
    from refunds.models import RefundCoupon

    table = RefundCoupon._meta.db_table
    return (f"EXISTS (SELECT 1 FROM {table} r WHERE r.coupon_id = {coupon}.id"  # noqa: S608
            f" AND r.order_id = {coupon}.locked_order_id AND r.status = %s)",
            [RefundCoupon.Status.AWAITING_REDEMPTION])

def waiting_on_people(coupon) -> tuple[list, list]:
    """The coupon's refund decisions waiting for approval and compensations waiting for a
    second operator, oldest first (coupons.diagnosis says what is pending now)."""
    from refunds.models import Compensation, RefundCoupon

    decisions = RefundCoupon.objects.filter(
        coupon=coupon, status=RefundCoupon.Status.PENDING_APPROVAL).order_by("id")
    compensations = Compensation.objects.filter(
        coupon=coupon, status=Compensation.Status.PROPOSED).order_by("id")
    return list(decisions), list(compensations)

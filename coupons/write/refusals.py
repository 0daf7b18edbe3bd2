from contextlib import contextmanager

from django.db import transaction

from coupons import clock, counters
from coupons.errors import CouponBusy, CouponError
from coupons.models import CommandRejection
from coupons.refusal_messages import refusal_message, stored_message
from coupons.write.declared import declared_insert


@contextmanager
def refusals_recorded(op_type: str, ctx, *, coupon_id=None, order_id: str = ""):
    """Record a refused command in the rejection log once its transaction has rolled back."""
    try:
        yield
    except CouponError as error:
        # The log is evidence read by every team: its message is stored in English, whatever
        # language the refused caller asked for (a lazy message is worded here), with its
        # sentence's code when it is no catalogue entry as it stands.
        rejection = CommandRejection(
            op_type=op_type,
            coupon_id_ref=coupon_id,
            order_id=order_id or "",
            actor=ctx.actor,
            error_code=error.code,
            **stored_message(error.message),
            details=error.details,
            idempotency_key=ctx.idempotency_key,
            created_at=clock.now(),
        )
        if isinstance(error, CouponBusy):
            # The row lock's wait ran out: the whole transaction rolls back (outside a savepoint
            # the database already failed it), so its owner writes the row afterwards.
            error.rejection = rejection
            raise
        declared_insert(rejection, actor=ctx.actor)
        counters.command_refused(op_type, error.code)
        raise


def record_after_rollback(error: CouponBusy) -> None:
    """The rejection refusals_recorded could not write in its failed transaction, in one of
    its own."""
    if error.rejection is None:
        return
    with transaction.atomic():
        declared_insert(error.rejection, actor=error.rejection.actor)
        counters.command_refused(error.rejection.op_type, error.code)


def record_console_denial(*, actor: str, path: str, method: str, capability: str) -> None:
    """A console page or action refused for want of a capability (shown to auditors as a
    refusal with code PERMISSION_DENIED)."""
    declared_insert(CommandRejection(
        op_type="CONSOLE",
        actor=actor,
        error_code="PERMISSION_DENIED",
        **stored_message(
            refusal_message("console_denied", method=method, path=path, capability=capability)
            if capability else
            refusal_message("console_undeclared", method=method, path=path)),
        details={"path": path, "method": method, "capability": capability},
        created_at=clock.now(),
    ), actor=actor)

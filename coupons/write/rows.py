"""Row locks, taken in one order everywhere: order binding → coupon → refund record."""

from django.conf import settings
from django.db import OperationalError, connection
from django.utils.translation import gettext_lazy as _

from coupons import after_sale, clock
from coupons.errors import CouponBusy, NotFound
from coupons.models import (
    CouponLock,
    CouponTemplateVersion,
    OrderCoupon,
    UserCoupon,
)
from coupons.sql import claims
from coupons.write.context import pending_claim


def lock_coupon_row(coupon_id, *, ctx=None) -> UserCoupon:
    """Lock the coupon row for the rest of the transaction.

    NO KEY UPDATE, not UPDATE: ledger, lock and outbox inserts that reference the coupon take
    KEY SHARE on it, and we must not block those; we never change the coupon's key. `of=self`
    because the joined lease is nullable (an outer join PostgreSQL cannot lock through).

    It is one statement that also reads the lease and its order link, whether
    refunds wait for the lease's order to redeem (`refunds_awaiting_redemption`) and, when
    run_once deferred the claim of `ctx`'s Idempotency-Key to this command, makes the claim
    first: a held key locks nothing and raises ClaimTaken. When the row lock had to wait for
    another command on the coupon, a second statement reads those rows again (see below).

    The same statement bounds the waits of the rest of the transaction (set_config, local to
    it): the row lock waits COMMAND_LOCK_TIMEOUT_MS at most, then CouponBusy (a row held by a
    stuck session must not hold every server thread that asks for it), and each later
    statement runs COMMAND_STATEMENT_TIMEOUT_MS at most.
    """
    try:
        coupon = _locked_in_one_statement(coupon_id, ctx)
    except OperationalError as error:
        if _row_lock_waited_out(error):
            raise CouponBusy(coupon_id=coupon_id, retry_after=RETRY_AFTER_SECONDS) from None
        raise
    if coupon is None:
        raise NotFound(_("No such coupon."), coupon_id=coupon_id)
    return coupon


# PostgreSQL's lock_not_available, and where it says which lock its wait was for.
LOCK_NOT_AVAILABLE = "55P03"
# A row held past the lock timeout is a stuck session or a long transaction, not a command's
# few milliseconds: a second is soon enough to ask again.
RETRY_AFTER_SECONDS = 1


def _row_lock_waited_out(error: OperationalError) -> bool:
    """Whether `error` is the coupon row's lock wait running out (a twin's claim that did was
    told apart by `claiming`). PostgreSQL names the row's relation only to the first waiter;
    the others queue on its tuple lock, with no context."""
    return getattr(error.__cause__, "sqlstate", None) == LOCK_NOT_AVAILABLE


def _bounds() -> list[str]:
    """The lock and statement timeouts the row lock sets for its transaction (parameters)."""
    return [f"{settings.COUPONS['COMMAND_LOCK_TIMEOUT_MS']}ms",
            f"{settings.COUPONS['COMMAND_STATEMENT_TIMEOUT_MS']}ms"]


def _locked_in_one_statement(coupon_id, ctx):
    from coupons.write.idempotency import ClaimTaken, claim_params, claiming

    claim = pending_claim(ctx) if ctx is not None else None
    claim = claim if claim is not None and claim.with_row_lock else None
    awaiting, awaiting_params = after_sale.awaiting_redemption_sql("c")
    params = [*awaiting_params, coupon_id, *_bounds()]
    with connection.cursor() as cursor:
        if claim is None:
            cursor.execute(claims.row_lock(awaiting), params)
            row = cursor.fetchone()
        else:
            made = claim_params(claim.scope, claim.key, claim.request_hash, clock.now())
            claiming(cursor, claims.claimed_and_locked(awaiting), [*made, *params],
                     with_row_lock=True)
            record_id, inserted, *row = cursor.fetchone()
            if not inserted:
                raise ClaimTaken(record_id, clean=claim.clean)
            claim.record_id = record_id
            row = row if row[0] is not None else None
        if row is not None and not row[-1]:
            # The row lock waited for a command on this coupon that committed after the
            # statement began: PostgreSQL re-checked the coupon row at its new version but kept
            # the lease, order link and refunds flag as the statement's snapshot had
            # them (say, no lease while the coupon is now LOCKED). Read them again: with the row
            # lock held, this statement's snapshot has the coupon as it stays.
            cursor.execute(claims.row_lock(awaiting), params)
            row = cursor.fetchone()
    return None if row is None else _instances(row)


# The rows read with the coupon, in the order of the select list, with their columns.
JOINED = (("c", UserCoupon, claims.COUPON_COLUMNS),
          ("tv", CouponTemplateVersion, claims.TERMS_COLUMNS),
          ("l", CouponLock, claims.LEASE_COLUMNS),
          ("oc", OrderCoupon, claims.ORDER_LINK_COLUMNS))


def _instances(row) -> UserCoupon:
    """The coupon with its terms, lease and order link set on it (assigned through the
    relations' descriptors, so reading `coupon.current_lock` costs no query)."""
    found, start = {}, 0
    for alias, model, columns in JOINED:
        values = row[start:start + len(columns)]
        start += len(columns)
        found[alias] = (model.from_db(connection.alias, columns, values)
                        if values[0] is not None else None)
    coupon, lock = found["c"], found["l"]
    coupon.template_version = found["tv"]
    coupon.current_lock = lock
    if lock is not None and found["oc"] is not None:
        lock.order_coupon = found["oc"]
    coupon.refunds_awaiting_redemption = row[start]
    return coupon

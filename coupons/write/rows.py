"""Row locks, taken in one order everywhere: order binding → coupon → refund record."""

from functools import cache

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
from coupons.write.context import pending_claim
from coupons.write.orm_sql import cache_related


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


# The rows read with the coupon, by alias, in the order of the select list.
JOINED = (("c", UserCoupon), ("tv", CouponTemplateVersion), ("l", CouponLock),
          ("oc", OrderCoupon))


def _locked_in_one_statement(coupon_id, ctx):
    from coupons.write.idempotency import ClaimTaken, claim_ctes, claiming

    claim = pending_claim(ctx) if ctx is not None else None
    claim = claim if claim is not None and claim.with_row_lock else None
    awaiting, awaiting_params = after_sale.awaiting_redemption_sql("c")
    params = [*awaiting_params, coupon_id, *_bounds()]
    with connection.cursor() as cursor:
        if claim is None:
            cursor.execute(_locked_sql(awaiting), params)
            row = cursor.fetchone()
        else:
            ctes, claim_params = claim_ctes(claim.scope, claim.key, claim.request_hash,
                                            clock.now())
            claiming(cursor, _claimed_and_locked_sql(ctes, awaiting), [*claim_params, *params],
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
            cursor.execute(_locked_sql(awaiting), params)
            row = cursor.fetchone()
    return None if row is None else _instances(row)


@cache
def _claimed_and_locked_sql(ctes, awaiting) -> str:
    """The claim of an Idempotency-Key, then the row lock if the claim was made."""
    return (f"WITH {ctes}, locked AS ({_locked_sql(awaiting, claimed=True)}) "
            "SELECT claim.id, claim.inserted, locked.* FROM claim LEFT JOIN locked ON true")


@cache
def _locked_sql(awaiting, *, claimed=False) -> str:
    """The row lock and every read that comes with it; `claimed`: only if the claim was made.
    Built once per process (`awaiting` is after-sale's SQL, the same each time).

    The last column, `as_seen`, is false when the coupon row locked is not the version the
    statement's snapshot has (the scalar subquery reads that version, the locked row is the
    newest), that is when the lock waited for a concurrent command's commit.

    The two set_config calls (`_bounds`) are in the WHERE, which PostgreSQL evaluates before
    the row lock above it waits: that wait already has the command's lock_timeout (whether the
    claim's own bounded wait ran before or after them, the claim puts back what it found).
    """
    qn = connection.ops.quote_name
    select = [f"{alias}.{qn(f.column)} AS {alias}_{i}" for alias, model in JOINED
              for i, f in enumerate(model._meta.concrete_fields)]
    return f"""
        SELECT {", ".join(select)},
               {awaiting} AS awaiting,
               (SELECT s.xmin FROM {UserCoupon._meta.db_table} s WHERE s.id = c.id) = c.xmin
                 AS as_seen
          FROM {UserCoupon._meta.db_table} c
          JOIN {CouponTemplateVersion._meta.db_table} tv ON tv.id = c.template_version_id
          LEFT JOIN {CouponLock._meta.db_table} l ON l.id = c.current_lock_id
          LEFT JOIN {OrderCoupon._meta.db_table} oc ON oc.lock_id = l.id
         WHERE c.id = %s {"AND (SELECT inserted FROM claim)" if claimed else ""}
           AND set_config('lock_timeout', %s, true) IS NOT NULL
           AND set_config('statement_timeout', %s, true) IS NOT NULL
           FOR NO KEY UPDATE OF c
    """  # noqa: S608 - table and column names are the models', every value is a parameter


def _instances(row) -> UserCoupon:
    """The coupon with its terms, lease and order link cached, as select_related leaves them."""
    found, start = {}, 0
    for alias, model, attnames in _joined_attnames():
        values = row[start:start + len(attnames)]
        start += len(attnames)
        found[alias] = (model.from_db(connection.alias, attnames, values)
                        if values[0] is not None else None)
    coupon, lock = found["c"], found["l"]
    cache_related(coupon, "template_version", found["tv"])
    cache_related(coupon, "current_lock", lock)
    if lock is not None:
        cache_related(lock, "order_coupon", found["oc"])
    coupon.refunds_awaiting_redemption = row[start]
    return coupon


@cache
def _joined_attnames() -> tuple:
    """(alias, model, attribute names in select order) of JOINED, as _locked_sql selects."""
    return tuple((alias, model, [f.attname for f in model._meta.concrete_fields])
                 for alias, model in JOINED)

"""Row locks, taken in one order everywhere: order binding → coupon → refund record."""

from django.db import connection
from django.utils.translation import gettext_lazy as _

from coupons import after_sale, clock
from coupons.errors import NotFound
from coupons.models import (
    CouponLock,
    CouponOperation,
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

    The same statement reads the hash of the ledger row at the coupon's current version, which
    the next ledger row links to (records.append_operation), instead of a read of its own.

    It is one statement that also reads the lease and its order link, whether
    refunds wait for the lease's order to redeem (`refunds_awaiting_redemption`) and, when
    run_once deferred the claim of `ctx`'s Idempotency-Key to this command, makes the claim
    first: a held key locks nothing and raises ClaimTaken.
    """
    coupon = _locked_in_one_statement(coupon_id, ctx)
    if coupon is None:
        raise NotFound(_("No such coupon."), coupon_id=coupon_id)
    if coupon.ledger_head_hash is not None:
        coupon.ledger_head = (coupon.state_version, coupon.ledger_head_hash)
    # else: if the row lock waited for a command on this coupon, the row was read again after
    # its commit but the subquery kept the statement's older snapshot and missed that command's
    # ledger row; records.append_operation then reads the head itself.
    return coupon


# The rows read with the coupon, by alias, in the order of the select list.
JOINED = (("c", UserCoupon), ("tv", CouponTemplateVersion), ("l", CouponLock),
          ("oc", OrderCoupon))


def _locked_in_one_statement(coupon_id, ctx):
    from coupons.write.idempotency import ClaimTaken, claim_ctes, claiming

    qn = connection.ops.quote_name
    select = [f"{alias}.{qn(f.column)} AS {alias}_{i}" for alias, model in JOINED
              for i, f in enumerate(model._meta.concrete_fields)]
    awaiting, awaiting_params = after_sale.awaiting_redemption_sql("c")
    claim = pending_claim(ctx) if ctx is not None else None
    claim = claim if claim is not None and claim.with_row_lock else None
    locked = f"""
        SELECT {", ".join(select)},
               (SELECT h.content_hash FROM {CouponOperation._meta.db_table} h
                 WHERE h.coupon_id = c.id AND h.to_version = c.state_version LIMIT 1) AS head,
               {awaiting} AS awaiting
          FROM {UserCoupon._meta.db_table} c
          JOIN {CouponTemplateVersion._meta.db_table} tv ON tv.id = c.template_version_id
          LEFT JOIN {CouponLock._meta.db_table} l ON l.id = c.current_lock_id
          LEFT JOIN {OrderCoupon._meta.db_table} oc ON oc.lock_id = l.id
         WHERE c.id = %s {"AND (SELECT inserted FROM claim)" if claim else ""}
           FOR NO KEY UPDATE OF c
    """  # noqa: S608 - table and column names are the models', every value is a parameter
    params = [*awaiting_params, coupon_id]
    with connection.cursor() as cursor:
        if claim is None:
            cursor.execute(locked, params)
            row = cursor.fetchone()
        else:
            ctes, claim_params = claim_ctes(claim.scope, claim.key, claim.request_hash,
                                            clock.now())
            claiming(cursor, f"WITH {ctes}, locked AS ({locked}) SELECT claim.id, "
                             "claim.inserted, locked.* "
                             "FROM claim LEFT JOIN locked ON true", [*claim_params, *params])
            record_id, inserted, *row = cursor.fetchone()
            if not inserted:
                raise ClaimTaken(record_id, clean=claim.clean)
            claim.record_id = record_id
            row = row if row[0] is not None else None
    return None if row is None else _instances(row)


def _instances(row) -> UserCoupon:
    """The coupon with its terms, lease and order link cached, as select_related leaves them."""
    found, start = {}, 0
    for alias, model in JOINED:
        fields = model._meta.concrete_fields
        values = row[start:start + len(fields)]
        start += len(fields)
        found[alias] = (model.from_db(connection.alias, [f.attname for f in fields], values)
                        if values[0] is not None else None)
    coupon, lock = found["c"], found["l"]
    cache_related(coupon, "template_version", found["tv"])
    cache_related(coupon, "current_lock", lock)
    if lock is not None:
        cache_related(lock, "order_coupon", found["oc"])
    coupon.ledger_head_hash, coupon.refunds_awaiting_redemption = row[start], row[start + 1]
    return coupon

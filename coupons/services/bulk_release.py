"""Release a batch of expired leases in a few statements (the lease scanner's fast path).

The same RELEASE as coupon_release (coupons/services/release.py), for many coupons at once:
one compare-and-set UPDATE whose WHERE still carries each row's own status, version, order and
token hash, one UPDATE of their locks, the ledger rows, their journal entries and the outbox
rows in one INSERT each. The caller holds every coupon's row lock, read in the same
transaction (the scanner's FOR NO KEY UPDATE SKIP LOCKED).
"""

from django.db.models import Case, F, Q, Value, When

from coupons.ledger_reasons import reason_fields
from coupons.models import CouponLock, CouponStatus, LockStatus, OperationType, UserCoupon
from coupons.write.records import append_operations, append_outboxes, ledger_row
from coupons.write.transitions import UNBOUND, guard_batch, is_past_validity


def coupons_release_expired(*, coupons: list[UserCoupon], ctx, now, reason: str) -> set[int]:
    """Release each coupon's current lease as read; the ids released.

    A coupon whose row no longer matches what was read (renewed, redeemed or released since,
    by a path that did not take the row lock) is left alone and missing from the answer.
    """
    if not coupons:
        return set()
    to_state = {c.pk: CouponStatus.EXPIRED if is_past_validity(c, now) else CouponStatus.AVAILABLE
                for c in coupons}
    guard_batch(OperationType.RELEASE, [(CouponStatus.LOCKED, to) for to in to_state.values()])
    as_read = Q(pk__in=[])
    for c in coupons:
        # The lease as the scanner read it: the lock's own order and stored token hash.
        as_read |= Q(pk=c.pk, status=CouponStatus.LOCKED, state_version=c.state_version,
                     current_lock_id=c.current_lock_id, locked_order_id=c.current_lock.order_id,
                     lock_token_hash=c.current_lock.token_hash)
    status = Case(*[When(pk=pk, then=Value(state)) for pk, state in to_state.items()])
    changed = UserCoupon.objects.filter(as_read).update(
        status=status, state_version=F("state_version") + 1, updated_at=now, **UNBOUND)
    if changed != len(coupons):
        moved = moved_on(coupons, to_state)
        coupons = [c for c in coupons if c.pk in moved]
    released = coupons

    CouponLock.objects.filter(pk__in=[c.current_lock_id for c in released]).update(
        status=LockStatus.RELEASED, ended_at=now)
    operations = []
    for coupon in released:
        lock, from_version = coupon.current_lock, coupon.state_version
        coupon.status, coupon.state_version, coupon.updated_at = (
            to_state[coupon.pk], from_version + 1, now)
        for field, value in UNBOUND.items():
            setattr(coupon, field, value)
        operations.append(ledger_row(
            coupon=coupon, op_type=OperationType.RELEASE, from_state=CouponStatus.LOCKED,
            from_version=from_version, ctx=ctx, now=now, order_id=lock.order_id, lock=lock,
            **reason_fields(reason)))
    append_outboxes(append_operations(operations))
    return {c.pk for c in released}


def moved_on(coupons, to_state) -> set[int]:
    """Which coupons the UPDATE changed, when it did not change them all: those now one version
    past what was read, in the state it set and unbound. Other transactions cannot move these
    rows (the caller holds their locks), so only this transaction's own commands could."""
    read = {c.pk: c.state_version for c in coupons}
    return {pk for pk, status, version, lock_id in UserCoupon.objects.filter(pk__in=read)
            .values_list("pk", "status", "state_version", "current_lock_id")
            if (status, version, lock_id) == (to_state[pk], read[pk] + 1, None)}

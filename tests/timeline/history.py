"""A coupon with a long history: the console's worst case.

`long_history` makes it through the services (every kind of entry; a thousand rows take
seconds); `bulk_history` writes lease after lease in bulk, journaled as the services would,
for the 20,000-row case (seconds instead of minutes). Used by the page and check tests'
query bounds and by scripts/benchmarks/bench_console_pages.py.
"""

import hashlib
import uuid
from datetime import timedelta
from decimal import Decimal

from django.db import connection

from coupons.errors import CouponError
from coupons.models import (
    CouponLock,
    CouponOperation,
    CouponStatus,
    LockStatus,
    OperationType,
    OrderCoupon,
    UserCoupon,
)
from coupons.services import CommandContext, LeaseProof, coupon_lock, coupon_redeem, coupon_release
from coupons.write.declared import declared_bulk_create
from coupons.write.records import append_outboxes
from coupons.write.tokens import current_lease_key_id
from refunds.services import refund_receive

CTX = CommandContext(actor="client:order-service")


def long_history(coupon, clock, *, ledger_rows: int = 1000, every: int = 10):
    """Order after order locks the coupon until its ledger has `ledger_rows` rows (ISSUE
    included). Most orders close (RELEASE); every `every`-th one pays and is refunded in full
    (REDEEM, then RETURN by the refund decision), and every `every`-th a stale order's late
    redeem is refused, so each source of the timeline has a long history too."""
    version, stale, n = coupon.state_version, None, 0
    while version < ledger_rows:
        order_id = f"order-{n}"
        proof = locked_by(coupon, order_id)
        version += 1
        clock.advance(seconds=1)
        if version == ledger_rows:
            break
        if stale is not None and n % every == 0:
            refused(coupon, stale)
        if n % every == every // 2 and version + 2 <= ledger_rows:
            coupon_redeem(coupon_id=coupon.pk, lease=proof, payment_id=f"pay-{n}", ctx=CTX)
            clock.advance(seconds=1)
            refund_receive(refund_id=f"refund-{n}", order_id=order_id, payment_id=f"pay-{n}",
                           refund_amount=Decimal("270.00"), refund_type="FULL", ctx=CTX)
            version += 2
        else:
            coupon_release(coupon_id=coupon.pk, lease=proof, ctx=CTX, reason="order closed")
            version += 1
        clock.advance(seconds=1)
        stale, n = proof, n + 1
    return UserCoupon.objects.get(pk=coupon.pk)


def locked_by(coupon, order_id: str) -> LeaseProof:
    locked = coupon_lock(coupon_id=coupon.pk, order_id=order_id, user_id=coupon.user_id,
                         order_amount=Decimal("300.00"), ctx=CTX)
    return LeaseProof.from_token(order_id=order_id, lock_token=locked.lock_token,
                                 expected_version=locked.state_version)


def refused(coupon, stale_proof) -> None:
    try:
        coupon_redeem(coupon_id=coupon.pk, lease=stale_proof, payment_id="late-payment", ctx=CTX)
    except CouponError:
        return  # refused and logged by the service: the entry we want in the timeline
    raise AssertionError("a stale lease's redeem was accepted")


def bulk_history(coupon, clock, *, ledger_rows: int, batch: int = 2000):
    """LOCK and RELEASE by order after order until the ledger has `ledger_rows` rows (an
    AVAILABLE coupon needs an odd number: ISSUE, then pairs), each with its lease, its journaled
    order binding and its outbox events: the per-coupon check finds nothing to report."""
    assert coupon.status == CouponStatus.AVAILABLE and (ledger_rows - coupon.state_version) % 2 == 0
    head = CouponOperation.objects.filter(coupon=coupon).order_by("-to_version").first()
    version, n = head.to_version, 0
    while version < ledger_rows:
        locks, bindings, operations = [], [], []
        for _ in range(min(batch, ledger_rows - version) // 2):
            at = clock.advance(seconds=1)
            order_id = f"bulk-{n}"
            lock = CouponLock(
                id=uuid.uuid4(), coupon=coupon, order_id=order_id,
                token_hash=hashlib.sha256(order_id.encode()).hexdigest(),
                token_key_id=current_lease_key_id(), status=LockStatus.RELEASED, locked_at=at,
                expires_at=at + timedelta(minutes=15), acquired_version=version + 1,
                ended_at=at + timedelta(seconds=1))
            binding = OrderCoupon(lock=lock, coupon=coupon, order_id=order_id,
                                  order_amount=Decimal("300.00"), discount_amount=Decimal("30.00"),
                                  template_version_id=coupon.template_version_id, created_at=at)
            locks.append(lock)
            bindings.append(binding)
            for op_type, from_state, to_state, when in (
                (OperationType.LOCK, CouponStatus.AVAILABLE, CouponStatus.LOCKED, at),
                (OperationType.RELEASE, CouponStatus.LOCKED, CouponStatus.AVAILABLE,
                 lock.ended_at),
            ):
                op = CouponOperation(
                    coupon=coupon, op_type=op_type, from_state=from_state, to_state=to_state,
                    from_version=version, to_version=version + 1, actor=CTX.actor,
                    order_id=order_id, lock=lock, created_at=when,
                    reason="order closed" if op_type == OperationType.RELEASE else "")
                operations.append(op)
                version += 1
            n += 1
        CouponLock.objects.bulk_create(locks)
        declared_bulk_create(bindings, actor=CTX.actor)
        append_outboxes(declared_bulk_create(operations, actor=CTX.actor))
    clock.advance(seconds=1)
    # The database lets a coupon's version rise one step per UPDATE (coupons/models/
    # state_moves.py), and 20,000 UPDATEs of one row in one transaction take seconds: this one
    # goes past the triggers, as the login's superuser, then back to the role it ran as (the
    # application role in tests, the owner in the benchmark).
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        (role,) = cursor.fetchone()
        cursor.execute("RESET ROLE")
        cursor.execute("SET session_replication_role = replica")
        try:
            UserCoupon.objects.filter(pk=coupon.pk).update(state_version=version)
        finally:
            cursor.execute("SET session_replication_role = origin")
            cursor.execute(f'SET ROLE "{role}"')
    return UserCoupon.objects.get(pk=coupon.pk)

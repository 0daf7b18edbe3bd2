"""The lease scanner racing itself and the lease holders, on PostgreSQL with real threads.

Each batch is read with FOR NO KEY UPDATE SKIP LOCKED, so a second scanner passes over rows the
first holds, and a holder's RENEW or REDEEM either takes the row first (the scanner skips it or
no longer finds it due) or waits and is then refused: never both, never a deadlock.
"""

import pytest
from django.db.models import Count

from coupons.errors import CouponError
from coupons.evidence.replay import coupon_check
from coupons.models import CommandRejection, CouponOperation, UserCoupon
from coupons.services import coupon_issue, coupon_redeem, coupon_renew
from operations import scanners
from tests.conftest import lock
from tests.coupons.concurrency.threads import all_ok, race

pytestmark = pytest.mark.django_db(transaction=True)

LEASE = 60


def expired_leases(template, ctx, clock, n) -> dict[int, object]:
    """n coupons, each locked by its own order; answers each holder's LeaseProof by coupon id,
    after moving the clock past every lease."""
    proofs = {}
    for i in range(n):
        coupon = coupon_issue(template_id=template.pk, user_id=f"u{i}", ctx=ctx).coupon
        proofs[coupon.pk] = lock(coupon, ctx, order_id=f"order-{coupon.pk}",
                                 lease_seconds=LEASE)[1]
    clock.advance(seconds=LEASE + 1)
    return proofs


def assert_every_coupon_replays():
    failures = {c.pk: r.violations for c in UserCoupon.objects.all()
                if not (r := coupon_check(c)).ok}
    assert not failures


def test_two_scanners_at_once_release_each_expired_lease_exactly_once(template, ctx, clock):
    proofs = expired_leases(template, ctx, clock, 200)

    reports = all_ok(race(*[lambda: scanners.scan_leases(batch=20)] * 2))

    assert sum(report.counts["released"] for report in reports) == 200
    assert all(set(report.counts) <= {"released"} for report in reports)
    releases = (CouponOperation.objects.filter(op_type="RELEASE")
                .values("coupon_id").annotate(n=Count("id")))
    assert {row["coupon_id"]: row["n"] for row in releases} == dict.fromkeys(proofs, 1)
    assert set(CouponOperation.objects.filter(op_type="RELEASE")
               .values_list("actor", flat=True)) == {"system:lease-scanner"}
    assert not CommandRejection.objects.exists()  # nobody even tried a coupon twice
    assert set(UserCoupon.objects.values_list("status", flat=True)) == {"AVAILABLE"}
    assert_every_coupon_replays()


def test_scanner_and_lease_holders_at_once_never_both_end_a_lease(template, ctx, clock):
    proofs = expired_leases(template, ctx, clock, 120)
    coupon_ids = sorted(proofs)

    def holders(my_ids):
        """Holders of even coupons renew, of odd ones pay; newest first, to meet the scanner."""
        outcomes = {}
        for coupon_id in reversed(my_ids):
            try:
                if coupon_id % 2:
                    coupon_redeem(coupon_id=coupon_id, lease=proofs[coupon_id],
                                  payment_id=f"P-{coupon_id}", ctx=ctx)
                else:
                    coupon_renew(coupon_id=coupon_id, lease=proofs[coupon_id], ctx=ctx,
                                 lease_seconds=600)
                outcomes[coupon_id] = "ok"
            except CouponError as error:
                outcomes[coupon_id] = error.code
        return outcomes

    quarters = [coupon_ids[i::4] for i in range(4)]
    report, *holder_outcomes = all_ok(race(
        lambda: scanners.scan_leases(batch=10),
        *[lambda ids=ids: holders(ids) for ids in quarters],
    ))

    holder = {cid: outcome for outcomes in holder_outcomes for cid, outcome in outcomes.items()}
    assert set(holder) == set(proofs)
    # A holder loses only to a release that came first; then the coupon is simply not LOCKED.
    assert set(holder.values()) <= {"ok", "INVALID_STATE"}
    released = set(CouponOperation.objects.filter(op_type="RELEASE")
                   .values_list("coupon_id", flat=True))
    assert released == {cid for cid, outcome in holder.items() if outcome != "ok"}
    assert report.counts["released"] == len(released)
    assert set(report.counts) <= {"released", "skipped"}
    coupons = UserCoupon.objects.in_bulk(coupon_ids)
    for coupon_id, outcome in holder.items():
        expected = ("AVAILABLE" if outcome != "ok"
                    else "USED" if coupon_id % 2 else "LOCKED")
        assert coupons[coupon_id].status == expected, (coupon_id, outcome)
        assert CouponOperation.objects.filter(coupon_id=coupon_id).count() == 3
    assert_every_coupon_replays()

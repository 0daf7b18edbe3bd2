"""Two presale expiry scanners at once on PostgreSQL: SKIP LOCKED shares the leases, and the
one ExpiryWarning per lease makes each warning go out exactly once."""

import pytest
from django.db.models import Count

from coupons.models import ExpiryWarning, OutboxEvent
from operations import scanners
from tests.coupons.concurrency.threads import all_ok, race
from tests.coupons.events.test_presale import deposit, issue, presale_template

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_scanners_at_once_warn_each_lease_exactly_once(clock, send):
    template = presale_template("presale", "STRICT")
    coupons = [issue(template, user_id=f"u{n}") for n in range(30)]
    for coupon in coupons:
        deposit(send, coupon, order_id=f"PS-{coupon.pk}")

    reports = all_ok(race(*[lambda: scanners.scan_presale_expiry(batch=5)] * 2))

    assert sum(report.counts["warned"] for report in reports) == 30
    per_coupon = (OutboxEvent.objects.filter(event_type="CouponExpiresBeforeFinalPayment")
                  .values("coupon_id").annotate(n=Count("id")))
    assert {row["coupon_id"]: row["n"] for row in per_coupon} == {c.pk: 1 for c in coupons}
    assert ExpiryWarning.objects.count() == 30

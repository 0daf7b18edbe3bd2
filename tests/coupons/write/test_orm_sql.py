"""What coupons.write.orm_sql takes from Django's internals, pinned: a Django upgrade that
changes the related-object cache fails here first."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from coupons.models import CouponLock, UserCoupon
from coupons.write.orm_sql import cache_related
from tests.conftest import lock

pytestmark = pytest.mark.django_db


def test_cache_related_answers_the_object_given_without_a_query(coupon, ctx):
    lock(coupon, ctx)
    coupon = UserCoupon.objects.get(pk=coupon.pk)
    lease = CouponLock.objects.get(pk=coupon.current_lock_id)
    fresh = UserCoupon.objects.get(pk=coupon.pk)

    cache_related(fresh, "current_lock", lease)
    with CaptureQueriesContext(connection) as ran:
        assert fresh.current_lock is lease
    cache_related(fresh, "current_lock", None)
    with CaptureQueriesContext(connection) as ran_none:
        assert fresh.current_lock is None

    assert (len(ran), len(ran_none)) == (0, 0)

"""What coupons.write.orm_sql takes from Django's internals, pinned: a Django upgrade that
changes the compiled UPDATE or the related-object cache fails here first."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from coupons.models import CouponLock, UserCoupon
from coupons.write.orm_sql import cache_related, update_sql
from tests.conftest import lock

pytestmark = pytest.mark.django_db


def test_update_sql_is_the_orm_s_update_compiled_and_not_run(coupon):
    cas = UserCoupon.objects.filter(pk=coupon.pk, status=coupon.status,
                                    state_version=coupon.state_version)

    with CaptureQueriesContext(connection) as ran:
        sql, params = update_sql(cas, {"state_version": coupon.state_version + 1})

    assert len(ran) == 0
    table = '"coupons_usercoupon"'
    assert sql == (f'UPDATE {table} SET "state_version" = %s WHERE ({table}."id" = %s AND '
                   f'{table}."state_version" = %s AND {table}."status" = %s)')
    assert params == [coupon.state_version + 1, coupon.pk, coupon.state_version, coupon.status]
    # It runs as the compare-and-set one_statement builds on it (rolled back: no ledger row).
    savepoint = transaction.savepoint()
    with connection.cursor() as cursor:
        cursor.execute(f"WITH cas AS ({sql} RETURNING 1) SELECT count(*) FROM cas", params)
        assert cursor.fetchone() == (1,)
    transaction.savepoint_rollback(savepoint)


def test_update_sql_keeps_a_where_added_to_the_queryset(coupon):
    sql, _ = update_sql(UserCoupon.objects.filter(pk=coupon.pk).extra(where=["true"]),
                        {"state_version": 9})

    assert sql.endswith('WHERE ("coupons_usercoupon"."id" = %s AND (true))')


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

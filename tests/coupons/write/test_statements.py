"""The statements built once per process (coupons.write.statements) are the ORM's own SQL for
the same rows, and follow the models' fields: a column a migration adds is written too."""

import uuid
from datetime import UTC, datetime

import pytest
from django.db import connection, transaction
from django.db.models.sql import UpdateQuery
from django.test.utils import CaptureQueriesContext

from coupons.models import CouponLock, CouponOperation, UserCoupon
from coupons.write import statements
from coupons.write.one_statement import CAS_HIT

pytestmark = pytest.mark.django_db


def orm_update(queryset, changes):
    query = queryset.query.chain(UpdateQuery)
    query.add_update_values(changes)
    sql, params = query.get_compiler(connection=connection).as_sql()
    return sql, list(params)


def test_the_compare_and_set_is_the_orm_s_update_for_the_same_filter(coupon):
    # The ORM orders a filter's keywords by name; given in that order, the texts are equal.
    where = {"pk": coupon.pk, "state_version": coupon.state_version, "status": coupon.status}
    changes = {"state_version": coupon.state_version + 1, "updated_at": coupon.updated_at}

    with CaptureQueriesContext(connection) as ran:
        built = statements.update_of(UserCoupon, changes, where)

    assert len(ran) == 0
    assert built == orm_update(UserCoupon.objects.filter(**where), changes)
    savepoint = transaction.savepoint()
    with connection.cursor() as cursor:
        cursor.execute(f"WITH cas AS ({built[0]} RETURNING 1) SELECT count(*) FROM cas",
                       built[1])
        assert cursor.fetchone() == (1,)
    transaction.savepoint_rollback(savepoint)


def test_a_none_in_the_filter_compares_is_null_as_the_orm_does(coupon):
    where = {"locked_order_id": None, "pk": coupon.pk}
    changes = {"state_version": 9}

    assert statements.update_of(UserCoupon, changes, where) == orm_update(
        UserCoupon.objects.filter(**where), changes)


def test_a_none_set_is_a_parameter_so_one_text_serves_every_value(coupon):
    cleared = statements.update_of(UserCoupon, {"current_lock": None}, {"pk": coupon.pk})

    assert cleared[0] == statements.update_of(UserCoupon, {"current_lock": coupon.pk},
                                              {"pk": coupon.pk})[0]
    assert cleared[1] == [None, coupon.pk]


def test_an_update_that_waits_for_the_compare_and_set_keeps_the_orm_s_where(coupon):
    changes = {"expires_at": datetime(2030, 1, 1, tzinfo=UTC)}
    lease_id = uuid.uuid4()
    sql, _ = statements.update_of(CouponLock, changes, {"pk": lease_id}, extra_where=CAS_HIT)
    orm_sql, _ = orm_update(CouponLock.objects.filter(pk=lease_id).extra(where=[CAS_HIT]),
                            changes)

    assert sql == orm_sql


def test_a_foreign_key_is_set_from_the_related_row_as_the_orm_takes_it(coupon):
    lease = CouponLock(pk="7b5a0c9e-0000-4000-8000-000000000000")
    changes = {"current_lock": lease}

    assert statements.update_of(UserCoupon, changes, {"pk": coupon.pk})[1] == orm_update(
        UserCoupon.objects.filter(pk=coupon.pk), changes)[1]


def test_an_insert_writes_every_column_of_the_model_but_the_generated_id():
    built = statements.insert(CouponOperation, with_pk=False, source="cas")
    columns = [f.column for f in CouponOperation._meta.concrete_fields if not f.primary_key]

    assert built.fields == tuple(f for f in CouponOperation._meta.concrete_fields
                                 if not f.primary_key)
    assert all(f'"{column}"' in built.sql for column in columns)
    assert '"id",' not in built.sql
    assert built.sql.endswith('FROM cas RETURNING "id" AS id')


def test_a_shape_is_built_once_per_process():
    first = statements.insert(CouponLock, with_pk=True, source="cas")

    assert statements.insert(CouponLock, with_pk=True, source="cas") is first

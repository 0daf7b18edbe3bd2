"""The statements built once per process (coupons.write.statements) are the ORM's own SQL for
the same rows, and follow the models' fields: a column a migration adds is written too."""

import uuid
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models.sql import UpdateQuery
from django.test.utils import CaptureQueriesContext
from psycopg.types.numeric import Int4

from coupons.models import (
    CouponLock,
    CouponOperation,
    OrderCoupon,
    OutboxEvent,
    Redemption,
    UserCoupon,
)
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


def orm_bind(statement, row) -> list:
    return [field.get_db_prep_save(field.pre_save(row, True), connection)
            for field in statement.fields]


def comparable(params) -> list:
    """Each parameter with its type (an int's wrapper names the type psycopg sends);
    psycopg's Jsonb wrapper has no equality: compare what it wraps."""
    return [(type(param), param.obj if hasattr(param, "obj") else param) for param in params]


@pytest.mark.parametrize("value", [
    "text", "", 7, True, None, uuid.UUID(int=7), datetime(2030, 1, 1, tzinfo=UTC),
    datetime(2030, 1, 1), "7", "2030-01-01T00:00:00+00:00",
], ids=repr)
@pytest.mark.filterwarnings("ignore:DateTimeField .* received a naive datetime")
def test_a_bind_sends_what_the_orm_would_for_any_value_in_any_column(value):
    """A bind skips the ORM's preparation of a value only where it would change nothing (or
    only wrap an integer): a value of another type, a naive time, goes through the ORM."""
    for model in {type(row) for row in command_rows()} | {OutboxEvent, Redemption}:
        statement = statements.insert(model, with_pk=True, source="cas")
        for field in statement.fields:
            row = model()
            try:
                setattr(row, field.attname, value)
                expected = comparable(orm_bind(statement, row))
            except (TypeError, ValueError, ValidationError, AttributeError):
                continue  # the ORM refuses it too; nothing to compare
            assert comparable(statement.bind(row)) == expected, (model, field.name, value)


def command_rows() -> list:
    """A LOCK's rows and its ledger row, as the services build them."""
    now = datetime(2030, 1, 1, tzinfo=UTC)
    lock = CouponLock(id=uuid.uuid4(), coupon_id=1, order_id="o-1", token_hash="h",
                      token_key_id="k1", locked_at=now, expires_at=now, acquired_version=2)
    return [lock, OrderCoupon(lock=lock, coupon_id=1, order_id="o-1", quote_id="",
                              order_amount=Decimal("300"), discount_amount=Decimal("30.00"),
                              template_version_id=1, created_at=now),
            CouponOperation(coupon_id=1, op_type="LOCK", from_state="AVAILABLE",
                            to_state="LOCKED", from_version=1, to_version=2, actor="a",
                            lock=lock, order_id="o-1", created_at=now)]


def test_a_command_s_rows_bind_as_the_orm_binds_them():
    for row in command_rows():
        statement = statements.insert(type(row), with_pk=row.pk is not None, source="cas")
        assert comparable(statement.bind(row)) == comparable(orm_bind(statement, row))


@pytest.mark.filterwarnings("ignore:DateTimeField .* received a naive datetime")
def test_an_update_binds_as_the_orm_does_whatever_the_values():
    lease = CouponLock(pk="7b5a0c9e-0000-4000-8000-000000000000")
    # Given in the order the ORM writes them (by name), the parameters line up; no None set
    # (the ORM writes NULL into the text, a built statement binds it).
    changes = {"current_lock": lease, "lock_expires_at": datetime(2030, 1, 1),
               "locked_order_id": "", "state_version": "3", "status": "USED"}
    where = {"locked_order_id": 7, "pk": "5", "state_version": 2, "status": "LOCKED"}

    built = statements.update_of(UserCoupon, changes, where)[1]
    assert comparable(built) == comparable(orm_update(UserCoupon.objects.filter(**where),
                                                      changes)[1])
    assert comparable(statements.update_of(UserCoupon, {"state_version": 3}, {"pk": 5})[1]) == [
        (Int4, 3), (int, 5)]

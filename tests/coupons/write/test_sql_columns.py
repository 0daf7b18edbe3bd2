"""What the literal SQL of coupons/sql/ assumes about the models and about Django, pinned
(docs/sql.md): a migration that adds a column, or a Django upgrade that changes how a related
object is cached, fails here before any command does."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from coupons.models import CouponLock, CouponTemplateVersion, OrderCoupon, UserCoupon
from coupons.sql import claims
from coupons.write.rows import lock_coupon_row
from tests.conftest import lock

pytestmark = pytest.mark.django_db


def stored_columns(model) -> tuple:
    return tuple(field.column for field in model._meta.get_fields()
                 if field.concrete and not field.many_to_many)


@pytest.mark.parametrize(("model", "columns"), [
    (UserCoupon, claims.COUPON_COLUMNS),
    (CouponTemplateVersion, claims.TERMS_COLUMNS),
    (CouponLock, claims.LEASE_COLUMNS),
    (OrderCoupon, claims.ORDER_LINK_COLUMNS),
], ids=lambda value: getattr(value, "__name__", ""))
def test_the_row_lock_reads_every_column_of_each_model(model, columns):
    assert columns == stored_columns(model)


def test_the_locked_coupon_carries_its_terms_lease_and_order_link_without_a_query(coupon, ctx):
    result, _ = lock(coupon, ctx)

    locked = lock_coupon_row(coupon.pk)
    with CaptureQueriesContext(connection) as ran:
        lease = locked.current_lock
        seen = (locked.template_version.pk, lease.pk, lease.order_coupon.order_id)

    assert len(ran) == 0
    assert seen == (coupon.template_version_id, result.lock.pk, "order-A")
    assert not locked._state.adding and locked.status == "LOCKED"


def test_an_unleased_coupon_answers_no_lease_without_a_query(coupon):
    locked = lock_coupon_row(coupon.pk)
    with CaptureQueriesContext(connection) as ran:
        assert locked.current_lock is None

    assert len(ran) == 0

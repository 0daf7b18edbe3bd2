"""A template's scope (stores, channel) has the grants of the rest of its terms: the template
row moves whole (every edit also freezes a version, through coupons.services.templates), and a
frozen version, which an issued coupon's scope and its substitutes are judged by, is SELECT and
INSERT only for the application's login."""

from decimal import Decimal

import pytest

from coupons.models import CouponTemplateVersion
from coupons.services import template_create
from operations.db_roles import APP_ROLE
from tests.coupons.safety.test_db_roles import PERMISSION, execute, refused

pytestmark = pytest.mark.django_db

SCOPE = ["stores", "channel"]


def privileges(table: str, column: str) -> tuple:
    [grants] = execute(
        "SELECT has_column_privilege(%s, %s, %s, 'SELECT'),"
        " has_column_privilege(%s, %s, %s, 'INSERT'),"
        " has_column_privilege(%s, %s, %s, 'UPDATE')", [APP_ROLE, table, column] * 3)
    return grants


@pytest.mark.parametrize("column", SCOPE)
def test_the_app_role_may_edit_a_templates_scope(column):
    assert privileges("coupons_coupontemplate", column) == (True, True, True)


@pytest.mark.parametrize("column", SCOPE)
def test_the_app_role_may_not_rewrite_a_frozen_versions_scope(column):
    assert privileges("coupons_coupontemplateversion", column) == (True, True, False)


def test_widening_an_issued_versions_scope_is_refused(clock):
    template = template_create(code="s1", name="s1", kind="AMOUNT_OFF",
                               face_value=Decimal("10.00"), valid_days=30, stores=["S1"],
                               channel="DELIVERY")
    version = CouponTemplateVersion.objects.get(template=template)

    assert PERMISSION in refused(
        "UPDATE coupons_coupontemplateversion SET stores = '{}', channel = '' WHERE id = %s",
        [version.pk])

    version.refresh_from_db()
    assert (version.stores, version.channel) == (["S1"], "DELIVERY")

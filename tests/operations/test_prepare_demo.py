"""`manage.py prepare_demo`: bin/run-demo's database step, as the owner: migrate, the roles and
their grants, then the demo (once)."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from coupons.models import UserCoupon
from operations.db_roles import APP_ROLE

# setup_db_roles needs the owner, as bin/run-demo runs it.
pytestmark = [pytest.mark.django_db, pytest.mark.owner_role]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.COUPONS_DEMO = True  # prepare_demo seeds, which runs only on a demo


def prepare(*args) -> str:
    out = StringIO()
    call_command("prepare_demo", *args, stdout=out)
    return out.getvalue()


def app_role_may_read_the_coupons() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT has_table_privilege(%s, 'coupons_usercoupon', 'SELECT')",
                       [APP_ROLE])
        return cursor.fetchone()[0]


def test_prepare_demo_grants_the_app_role_then_seeds_once(tmp_path):
    with connection.cursor() as cursor:
        cursor.execute(f"REVOKE SELECT ON coupons_usercoupon FROM {APP_ROLE}")
    assert not app_role_may_read_the_coupons()

    first = prepare("--key-file", str(tmp_path / "key"))

    assert f"{APP_ROLE}: SELECT and INSERT on every table" in first
    assert app_role_may_read_the_coupons()
    assert "Demo data created." in first and (tmp_path / "key").read_text().strip()
    seeded = UserCoupon.objects.count()
    assert seeded > 0

    again = prepare()

    assert "Demo data is already there" in again
    assert UserCoupon.objects.count() == seeded

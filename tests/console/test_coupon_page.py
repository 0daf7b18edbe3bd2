"""The coupon page: the header tells who holds the coupon now."""

import pytest
from django.urls import reverse

from tests.conftest import lock

pytestmark = pytest.mark.django_db


def test_header_shows_status_version_owner_and_the_order_holding_it(signed_in, coupon, ctx):
    lock(coupon, ctx, order_id="order-A")
    page = signed_in("support").get(reverse("console:coupon", args=[coupon.pk])).content.decode()
    assert f"Coupon {coupon.pk}" in page
    assert 'class="badge badge-locked">LOCKED<' in page
    assert "v2" in page and coupon.user_id in page
    assert "order <strong>order-A</strong>" in page


def test_unknown_coupon_is_a_404(signed_in):
    assert signed_in("support").get(reverse("console:coupon", args=[999999])).status_code == 404

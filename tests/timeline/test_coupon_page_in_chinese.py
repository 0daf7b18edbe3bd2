"""The coupon page's domain sentences (the diagnosis, what support should do, the invariants)
render in Chinese for a zh-hans reader; the page's own labels are the templates' part."""

import pytest
from django.urls import reverse

from tests.conftest import lock
from tests.zh_catalogue import compiled_catalogue, zh  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.mark.usefixtures("zh")
def test_coupon_page_answers_why_and_what_to_do_in_chinese(signed_in, coupon, ctx):
    lock(coupon, ctx, order_id="order-A")

    page = signed_in("support").get(reverse("console:coupon", args=[coupon.pk]),
                                    HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    order = '<a href="/search/?q=order-A">order-A</a>'
    assert f"已被订单 {order} 锁定，租约到期时间为 <time" in page
    assert f"如果订单 {order} 关闭或支付失败，优惠券会自动释放" in page
    assert "一张券最多只有一个有效锁定" in page
    assert "LOCK" in page  # codes and states stay English


def test_coupon_page_stays_english_by_default(signed_in, coupon, ctx):
    lock(coupon, ctx, order_id="order-A")

    page = signed_in("support").get(reverse("console:coupon", args=[coupon.pk])).content.decode()

    assert 'Locked by order <a href="/search/?q=order-A">order-A</a> until ' in page
    assert "a coupon has at most one active lock" in page
